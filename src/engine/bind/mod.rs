//! Values into SQLite: a call's arguments onto a statement's parameters exactly as
//! better-sqlite3 12's `Binder` places them. Arguments bind positionally, an array's
//! elements one by one, and one plain object by name (each named parameter looked up on
//! it in the statement's parameter order, the key strings made once per statement:
//! `keys`); how each value binds is `values`' (straight onto the statement, or into a
//! list for the store).

mod keys;
mod values;

pub use keys::NamedKeys;
pub use values::{bind_raw, BindTarget, BoundValues, Collect, Direct};

use smallvec::SmallVec;

use crate::engine::js::sql_value::Bound;
use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{Napi, Raw};
use crate::ffi::sqlite::RawStmt;

/// The arguments of one statement call.
pub type Args<'a> = SmallVec<[Arg<'a>; 8]>;

pub const TOO_MANY: &str = "Too many parameter values were provided";
pub const TOO_FEW: &str = "Too few parameter values were provided";

/// One argument of a `stmt.run(...args)` call: a caller's JS value (spread or taken
/// as named parameters by the rules below) or a value the store computed.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Js(JsVal),
    Val(&'a Bound),
}

/// What binding needs to know about a prepared statement's parameters.
pub trait ParamInfo {
    fn parameter_count(&self) -> usize;
    /// The parameter's name including its prefix (`@a`, `:a`, `$a`, `?1`), or None.
    fn parameter_name(&self, index: usize) -> Option<&str>;
}

/// A statement shape of `n` anonymous `?` parameters (for statements whose first
/// parameters take the caller's values positionally and the rest store-computed ones).
pub struct Anonymous(pub usize);

impl ParamInfo for Anonymous {
    fn parameter_count(&self) -> usize {
        self.0
    }
    fn parameter_name(&self, _index: usize) -> Option<&str> {
        None
    }
}

impl ParamInfo for RawStmt {
    fn parameter_count(&self) -> usize {
        RawStmt::parameter_count(self)
    }
    fn parameter_name(&self, index: usize) -> Option<&str> {
        RawStmt::parameter_name(self, index)
    }
}

/// The values of `args` for a statement described by `params`, by parameter index.
pub fn bind_args_with<P: ParamInfo + ?Sized>(js: Napi, params: &P, args: &[Arg<'_>]) -> SResult<BoundValues> {
    let mut out = BoundValues::new();
    bind_args(js, &mut Collect { params, out: &mut out }, args, None)?;
    Ok(out)
}

/// better-sqlite3's `Binder::Bind`: places every argument on `target`, with its errors
/// and in its order (each value bound before the next is read). `keys` keeps the
/// statement's named-parameter keys between calls (made here on the first object).
pub fn bind_args<T: BindTarget>(
    js: Napi,
    target: &mut T,
    args: &[Arg<'_>],
    keys: Option<&mut Option<NamedKeys>>,
) -> SResult<()> {
    let param_count = target.parameter_count();
    let has_named = |t: &T| (1..=param_count).any(|i| t.parameter_name(i).is_some());
    let mut anon_index = 0usize;
    let mut next_anon = |t: &T| {
        anon_index += 1;
        while anon_index <= param_count && t.parameter_name(anon_index).is_some() {
            anon_index += 1;
        }
        // Past the last parameter: the target refuses it (after checking the value).
        anon_index
    };
    let mut keys = keys;
    let mut count = 0usize;
    let mut bound_object = false;
    for arg in args {
        let arg = match arg {
            Arg::Val(b) => {
                let index = next_anon(target);
                target.put_computed(index, b)?;
                count += 1;
                continue;
            }
            Arg::Js(v) => v,
        };
        if arg.is_array()? {
            for i in 0..arg.array_len()? {
                let value = arg.element(i)?;
                let index = next_anon(target);
                target.put(index, &value)?;
                count += 1;
            }
            continue;
        }
        if (arg.is_object() || arg.is_function()) && !arg.is_buffer()? {
            if arg.has_plain_prototype()? {
                if bound_object {
                    return Err(StoreError::type_error(
                        "You cannot specify named parameters in two different objects",
                    ));
                }
                bound_object = true;
                count += bind_object(js, target, arg, keys.as_deref_mut())?;
                continue;
            } else if has_named(target) {
                return Err(StoreError::type_error(
                    "Named parameters can only be passed within plain objects",
                ));
            }
        }
        let index = next_anon(target);
        target.put(index, arg)?;
        count += 1;
    }
    if count != param_count {
        if count < param_count {
            if !bound_object && has_named(target) {
                return Err(StoreError::type_error("Missing named parameters"));
            }
            return Err(StoreError::range_error(TOO_FEW));
        }
        return Err(StoreError::range_error(TOO_MANY));
    }
    Ok(())
}

/// [`bind_args`] for a call whose values are all plain (numbers, strings, BigInts, null,
/// undefined) on a statement whose parameters have no names: value `i` on parameter
/// `i + 1`, with the same errors in the same order, and none of the reading an array or
/// an object needs. None when a value is an object of any kind (arrays and buffers
/// included): [`bind_args`] then binds the whole call again, which the values bound so
/// far cannot tell (reading a plain value runs no JS).
pub fn bind_plain<T: BindTarget>(js: Napi, target: &mut T, params: &[Raw]) -> Option<SResult<()>> {
    for (i, &raw) in params.iter().enumerate() {
        let value = match JsVal::wrap(js, raw) {
            Ok(value) => value,
            Err(error) => return Some(Err(error)),
        };
        if value.is_object() || value.is_function() {
            return None;
        }
        // Past the last parameter, the target refuses the value after checking it.
        if let Err(error) = target.put(i + 1, &value) {
            return Some(Err(error));
        }
    }
    // No parameter has a name, so none is missing by name.
    Some(if params.len() < target.parameter_count() {
        Err(StoreError::range_error(TOO_FEW))
    } else {
        Ok(())
    })
}

/// Binds one value per parameter, in the statement's parameter order: the values the JS
/// layer read from a named-parameter object (lib/database/binding.cjs, which checked them first
/// as better-sqlite3 checks each while it reads them), each bound as `values` binds it.
pub fn bind_in_order<T: BindTarget>(js: Napi, target: &mut T, params: &[Raw]) -> SResult<()> {
    let count = target.parameter_count();
    if params.len() != count {
        return Err(StoreError::range_error(if params.len() < count {
            TOO_FEW
        } else {
            TOO_MANY
        }));
    }
    for (i, &raw) in params.iter().enumerate() {
        target.put(i + 1, &JsVal::wrap(js, raw)?)?;
    }
    Ok(())
}

/// The names the JS layer reads a named-parameter object by, in parameter order: each
/// parameter's name without its prefix, or None when one has no name (the object then
/// goes through [`bind_args`]).
pub fn parameter_keys(params: &(impl ParamInfo + ?Sized)) -> Option<Vec<String>> {
    let named = keys::named_parameters(params);
    (named.len() == params.parameter_count()).then(|| named.into_iter().map(|(_, name)| name).collect())
}

/// better-sqlite3's `BindObject`: each named parameter, in order, must be an own property
/// of `object`; its value is read and bound before the next is looked up. Returns how
/// many were bound.
fn bind_object<T: BindTarget>(
    js: Napi,
    target: &mut T,
    object: &JsVal,
    kept: Option<&mut Option<NamedKeys>>,
) -> SResult<usize> {
    let fresh;
    let keys = match kept {
        Some(Some(keys)) => &*keys,
        Some(slot) => &*slot.insert(NamedKeys::new(js, target)?),
        None => {
            fresh = NamedKeys::new(js, target)?;
            &fresh
        }
    };
    let mut count = 0;
    keys.each(js, |index, name, key| {
        if !js.has_own_property(object.raw(), key)? {
            return Err(StoreError::range_error(format!("Missing named parameter \"{name}\"")));
        }
        let value = JsVal::wrap(js, js.property(object.raw(), key)?)?;
        target.put(index, &value)?;
        count += 1;
        Ok(())
    })?;
    Ok(count)
}

/// The arguments of a variadic native call (`ffi::napi::Variadic`) as they were passed.
pub fn args_into<'a>(napi: Napi, raw: &[Raw], out: &mut Args<'a>) -> SResult<()> {
    for &v in raw {
        out.push(Arg::Js(JsVal::wrap(napi, v)?));
    }
    Ok(())
}

/// The arguments of a JS call, as the JS layer's rest parameter gathered them in an array.
pub fn args_of<'a>(params: &JsVal) -> SResult<Args<'a>> {
    let len = params.array_len()?;
    let mut out = Args::with_capacity(len as usize);
    for i in 0..len {
        out.push(Arg::Js(params.element(i)?));
    }
    Ok(out)
}
