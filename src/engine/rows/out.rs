//! Rows leaving for JS. Every read builds its rows here, from a statement its caller
//! steps and the statement's [`RowLayout`]:
//! - [`RowBatch`] (`all()`, `pragma`, the store's `all`): the values of many rows go to
//!   the JS layer's row filler (lib/database/rows.cjs `fill`) a chunk at a time, as the arguments
//!   of one call that builds the chunk's rows and appends them to the result array. A
//!   chunk's values live in a handle scope of their own, closed once they are in rows.
//! - [`one_row`] (`get()`, an iterator's `next()`, the store's `get`): a row of one value
//!   crosses as that value (JS wraps it by its form); a row of a registered form with no
//!   stored JSON whose values are all numbers (or all BigInts) crosses in the row lane
//!   alone, read by JS after the call; any other such row is made by its form's maker,
//!   a JS function called with the row's values as its arguments and nothing else; any
//!   other row is built by the filler as a chunk of one.
//!
//! Stored JSON columns (the store's rows) are checked here and written, fallbacks in
//! place, into one JSON array text per chunk that the filler parses once. A chunk's small
//! BLOBs cross as ArrayBuffers that the filler wraps as Buffers (`value_js_wrapped`). The
//! numbers of a chunk or of a maker's row cross in the row lane (`slot::ROW_LANE` on,
//! memory JS reads through a typed array, which makes the numbers and BigInts for less
//! than Node-API does; see [`Lane`]), each `undefined` in its place among the values and
//! its 64 bits at the same place in the lane.

use std::cell::RefCell;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::types::ValueRef;

use crate::engine::js::json_out::JsonOut;
use crate::engine::js::protocol::{form, slot};
use crate::engine::js::result_slots;
use crate::engine::js::throw::Throw;
use crate::engine::js::value::JsVal;
use crate::error::{SResult, StoreError};
use crate::ffi::napi::{JsRef, Napi, Raw, Scope};
use crate::ffi::sqlite::RawStmt;

use super::layout::{value_truthy, Column, Form, RowLayout};
use crate::engine::js::sql_value::{value_js, value_js_wrapped};

/// A chunk is handed over once it holds this many values (whole rows: a row has at most
/// SQLite's 2,000 columns, so a call takes at most a few thousand arguments)...
const CHUNK_VALUES: usize = 1024;
/// ...or this many bytes of stored JSON.
const CHUNK_JSON: usize = 1 << 20;

/// The filler's leading arguments: the rows array (or null), the form, the row count, the
/// chunk's JSON (or undefined), how many of its values JS wraps as Buffers and the lane
/// its `undefined` values are read from (`form::LANE_*`); the values follow.
const LEAD: usize = 6;

/// A lone row of at most this many values goes to its form's maker; a wider one to the
/// filler (a maker is compiled with one parameter per value).
const MAKER_VALUES: usize = 64;
// A maker's row fits the row lane whole.
const _: () = assert!(MAKER_VALUES <= slot::ROW_LANE_MAX);
// A lane row's held value has a place among a maker's values (`lane_row`).
const _: () = assert!(MAKER_VALUES < form::LANE_HELD_PLACES as usize);

thread_local! {
    /// This thread's row filler (lib/database/rows.cjs), set once when the binding loads.
    static FILLER: RefCell<Option<JsRef>> = const { RefCell::new(None) };
    /// The JS function that returns a form's maker (`makerOf(form, lane)`), set with the filler.
    static MAKER_OF: RefCell<Option<JsRef>> = const { RefCell::new(None) };
    /// The makers asked for so far, at `form::LANES` times the form's number plus the
    /// lane its `undefined` values are read from.
    static MAKERS: RefCell<Vec<Option<JsRef>>> = const { RefCell::new(Vec::new()) };
}

/// `native.setRowFiller(fill, makerOf)`: the JS functions that build rows from their
/// values: many rows at a time (`fill`), or one row of a form (the function
/// `makerOf(form, lane)` returns).
#[napi]
pub fn set_row_filler(env: Env, fill: JsVal, maker_of: JsVal) -> Result<()> {
    if !fill.is_function() || !maker_of.is_function() {
        return Err(Error::from_reason("the row filler and maker source must be functions"));
    }
    let js = Napi::new(env.raw());
    let fill = js.keep(fill.raw()).map_err(|e| e.throw(env.raw()))?;
    let maker_of = js.keep(maker_of.raw()).map_err(|e| e.throw(env.raw()))?;
    FILLER.with(|f| *f.borrow_mut() = Some(fill));
    MAKER_OF.with(|m| *m.borrow_mut() = Some(maker_of));
    MAKERS.with(|m| m.borrow_mut().clear());
    Ok(())
}

/// Form `id`'s maker whose `undefined` arguments are read from `lane`: asked of JS
/// once, then kept.
fn maker(js: Napi, id: u32, lane: Lane) -> SResult<Raw> {
    let at = form::LANES as usize * id as usize + lane as usize;
    let kept = MAKERS.with(|m| m.borrow().get(at).and_then(|k| k.as_ref().map(|k| k.get(js))));
    if let Some(maker) = kept {
        return maker;
    }
    let maker_of = MAKER_OF.with(|m| match m.borrow().as_ref() {
        Some(kept) => kept.get(js),
        None => Err(StoreError::error(
            "the row maker source was never set (native.setRowFiller)",
        )),
    })?;
    let maker = js.call(
        maker_of,
        js.undefined()?,
        &[js.number(f64::from(id))?, js.number(f64::from(lane as u32))?],
    )?;
    let kept = js.keep(maker)?;
    MAKERS.with(|m| {
        let mut makers = m.borrow_mut();
        if makers.len() <= at {
            makers.resize_with(at + 1, || None);
        }
        makers[at] = Some(kept);
    });
    Ok(maker)
}

fn filler(js: Napi) -> SResult<Raw> {
    FILLER.with(|f| match f.borrow().as_ref() {
        Some(kept) => kept.get(js),
        None => Err(StoreError::error("the row filler was never set (native.setRowFiller)")),
    })
}

/// The form as JS reads it: its number, or its description as an array of strings.
fn form_js(js: Napi, form: &Form) -> SResult<Raw> {
    match form {
        Form::Id(id) => js.number(f64::from(*id)),
        Form::Text(text) => {
            let items: Vec<&str> = text.items().collect();
            let array = js.array(items.len())?;
            for (i, item) in items.iter().enumerate() {
                js.set_element(array, i as u32, js.text(item.as_bytes())?)?;
            }
            Ok(array)
        }
    }
}

/// Column `i` of the current row as its layout has it.
#[inline]
fn column_js(js: Napi, stmt: &RawStmt, i: usize, column: Column, safe_integers: bool) -> SResult<Raw> {
    value_js(js, column_value(stmt, i, column), safe_integers)
}

/// Column `i`'s value, or the text a falsy one defaults to.
#[inline]
fn column_value<'s>(stmt: &'s RawStmt, i: usize, column: Column) -> ValueRef<'s> {
    let v = stmt.column(i);
    match column {
        Column::FalsyDefault(default) if !value_truthy(v) => ValueRef::Text(default.as_bytes()),
        _ => v,
    }
}

/// How a read's numbers cross: as JS values made through Node-API, or in the row lane,
/// where JS reads them through a typed array of its kind. The lane is there when the
/// result slots are memory shared with JS.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Lane {
    None = form::LANE_NONE,
    /// INTEGER values read as BigInt, as i64 (a BigInt64Array).
    BigInts = form::LANE_BIGINTS,
    /// INTEGER and REAL values read as numbers, as doubles (a Float64Array).
    Numbers = form::LANE_NUMBERS,
}

impl Lane {
    fn for_read(safe_integers: bool) -> Lane {
        match result_slots::with_shared(|slots| slots.is_some()) {
            false => Lane::None,
            true if safe_integers => Lane::BigInts,
            true => Lane::Numbers,
        }
    }

    /// The 64 bits `value` crosses as in this lane, or None when it crosses as a JS value.
    #[inline]
    fn bits(self, value: ValueRef<'_>) -> Option<i64> {
        match (self, value) {
            (Lane::BigInts, ValueRef::Integer(n)) => Some(n),
            // The same double as Node-API's number from an i64.
            (Lane::Numbers, ValueRef::Integer(n)) => Some((n as f64).to_bits() as i64),
            (Lane::Numbers, ValueRef::Real(f)) => Some(f.to_bits() as i64),
            _ => None,
        }
    }
}

/// Values in the row lane: each one's place among the values and its 64 bits.
type LaneValues = Vec<(usize, i64)>;

thread_local! {
    /// The argument and lane buffers of the last batch, kept for the next one: a read
    /// then allocates nothing of its own.
    static SPARE: RefCell<(Vec<Raw>, LaneValues)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// The rows of one call, handed to the filler a chunk at a time.
pub struct RowBatch<'l> {
    js: Napi,
    layout: &'l RowLayout,
    safe_integers: bool,
    filler: Raw,
    /// The filler's arguments: `LEAD` leading ones, then this chunk's values.
    args: Vec<Raw>,
    count: u32,
    /// How many of the chunk's values JS wraps as Buffers.
    wrapped: u32,
    /// How the rows' numbers cross.
    lane: Lane,
    /// The chunk's values in the lane.
    laned: LaneValues,
    /// `undefined`, the place of a value in the row lane.
    undefined: Raw,
    json: Option<JsonOut>,
    /// Whether each chunk's values get a handle scope of their own (not for a lone row,
    /// which must outlive the batch).
    scoped: bool,
    /// The chunk's values are handles of this scope (opened with the chunk's first row).
    scope: Option<Scope>,
}

impl<'l> RowBatch<'l> {
    /// Rows appended to `rows`, a JS array (or built one at a time when it is null).
    fn new(js: Napi, layout: &'l RowLayout, safe_integers: bool, rows: Raw, scoped: bool) -> SResult<Self> {
        // A chunk holds up to CHUNK_VALUES values and one row more.
        let room = layout.values.len() + if scoped { CHUNK_VALUES } else { 0 };
        // A batch made while another is open (a read in a user function a step runs)
        // finds the spare buffers taken and makes its own.
        let (mut args, mut laned) = SPARE.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
        args.clear();
        laned.clear();
        args.reserve(LEAD + room);
        args.extend([rows, form_js(js, &layout.form)?, rows, rows, rows, rows]);
        Ok(RowBatch {
            js,
            layout,
            safe_integers,
            filler: filler(js)?,
            args,
            count: 0,
            wrapped: 0,
            lane: Lane::for_read(safe_integers),
            laned,
            undefined: js.undefined()?,
            json: None,
            scoped,
            scope: None,
        })
    }

    /// For `all()`: the rows go into a new JS array, returned by [`RowBatch::finish`].
    pub fn all(js: Napi, layout: &'l RowLayout, safe_integers: bool) -> SResult<Self> {
        RowBatch::new(js, layout, safe_integers, js.array(0)?, true)
    }

    /// Adds the statement's current row.
    pub fn push(&mut self, stmt: &RawStmt) -> SResult<()> {
        let js = self.js;
        if self.scoped && self.scope.is_none() {
            self.scope = Some(js.scope()?);
        }
        for &(i, column) in &self.layout.values {
            let value = column_value(stmt, i, column);
            if let Some(bits) = self.lane.bits(value) {
                let at = self.args.len() - LEAD;
                if at < slot::ROW_LANE_MAX {
                    self.laned.push((at, bits));
                    self.args.push(self.undefined);
                    continue;
                }
            }
            let (value, wrapped) = value_js_wrapped(js, value, self.safe_integers)?;
            self.wrapped += u32::from(wrapped);
            self.args.push(value);
        }
        if !self.layout.json.is_empty() {
            let json = self.json.get_or_insert_with(JsonOut::new);
            json.buf.push(if self.count == 0 { '[' } else { ',' });
            for (k, &(at, fallback)) in self.layout.json.iter().enumerate() {
                if k > 0 {
                    json.buf.push(',');
                }
                match at {
                    Some(i) => json.parsed_json(stmt.column(i), fallback),
                    None => json.raw(fallback),
                }
            }
        }
        self.count += 1;
        let json_len = self.json.as_ref().map_or(0, |j| j.buf.len());
        if self.args.len() - LEAD >= CHUNK_VALUES || json_len >= CHUNK_JSON {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the chunk to the filler; returns what it returned (the rows array, or the
    /// one row built when there is no array).
    fn flush(&mut self) -> SResult<Raw> {
        let js = self.js;
        self.args[2] = js.number(f64::from(self.count))?;
        self.args[3] = match self.json.take() {
            Some(mut json) => {
                json.buf.push(']');
                js.text(json.buf.as_bytes())?
            }
            None => js.undefined()?,
        };
        self.args[4] = js.number(f64::from(self.wrapped))?;
        // Written right before the call that reads them: a user function run by a step
        // between two rows may have used the slots for rows of its own.
        write_lane(&self.laned);
        let lane = if self.laned.is_empty() { Lane::None } else { self.lane };
        self.args[5] = js.number(f64::from(lane as u32))?;
        let out = js.call(self.filler, self.undefined, &self.args);
        self.args.truncate(LEAD);
        self.count = 0;
        self.wrapped = 0;
        self.laned.clear();
        // The chunk's values are in rows now (or thrown away with an error).
        self.scope = None;
        out
    }

    /// The rows array, every row in it.
    pub fn finish(mut self) -> SResult<Raw> {
        if self.count > 0 {
            self.flush()?;
        }
        Ok(self.args[0])
    }
}

impl Drop for RowBatch<'_> {
    fn drop(&mut self) {
        let args = std::mem::take(&mut self.args);
        let laned = std::mem::take(&mut self.laned);
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            if spare.0.capacity() < args.capacity() {
                spare.0 = args;
            }
            if spare.1.capacity() < laned.capacity() {
                spare.1 = laned;
            }
        });
    }
}

/// Puts each value of the row lane at its place (the lane is there: the caller checked).
fn write_lane(values: &[(usize, i64)]) {
    result_slots::with_shared(|slots| {
        if let Some(slots) = slots {
            for &(at, n) in values {
                slots.put_i64(slot::ROW_LANE + at, n);
            }
        }
    });
}

/// A plucked row of `get()`, an iterator or a simple pragma: its first column's value
/// alone (a small BLOB as its ArrayBuffer, which JS wraps as its Buffer), as
/// better-sqlite3 reads column 0 whatever the statement (null for a row of no columns).
/// No form is written: JS knows a plucked read by its mode.
pub fn plucked(js: Napi, stmt: &RawStmt, safe_integers: bool) -> SResult<Raw> {
    if stmt.column_count() == 0 {
        return js.null();
    }
    Ok(value_js_wrapped(js, stmt.column(0), safe_integers)?.0)
}

/// The current row of a stepped statement for `get()` and iterators, in any mode but
/// pluck ([`plucked`]): the row itself, or a lone value whose form JS wraps it in, left in
/// the ROW_FORM result slot (-1: none; a small BLOB is its ArrayBuffer then, with its
/// form named).
pub fn one_row(js: Napi, stmt: &RawStmt, layout: &RowLayout, safe_integers: bool) -> SResult<Raw> {
    let lone = match layout.values[..] {
        [(i, column)] => layout.single_value().map(|form| (i, column, f64::from(form))),
        _ => None,
    };
    let (value, form) = match (lone, &layout.form) {
        // A small BLOB crosses as its ArrayBuffer, which JS wraps as its Buffer when it
        // wraps the value by its form (a lone value's form is then named too).
        (Some((i, column, form)), &Form::Id(id)) => {
            let (value, wrapped) = value_js_wrapped(js, column_value(stmt, i, column), safe_integers)?;
            (value, if wrapped { f64::from(id) } else { form })
        }
        (Some((i, column, form)), Form::Text(_)) => (column_js(js, stmt, i, column, safe_integers)?, form),
        (None, &Form::Id(id)) if layout.json.is_empty() && layout.values.len() <= MAKER_VALUES => {
            let lane = Lane::for_read(safe_integers);
            match lane_row(stmt, layout, id, lane) {
                Some((code, Some(held))) => (value_js(js, held, safe_integers)?, code),
                Some((code, None)) => (js.null()?, code),
                None => (maker_row(js, stmt, layout, id, lane, safe_integers)?, -1.0),
            }
        }
        (None, _) => {
            let mut batch = RowBatch::new(js, layout, safe_integers, js.null()?, false)?;
            batch.push(stmt)?;
            (batch.flush()?, -1.0)
        }
    };
    result_slots::set(js, slot::ROW_FORM, form)?;
    Ok(value)
}

/// A lone row of form `id` put in the row lane, when all its values but at most one
/// cross there (numbers; with safe integers, INTEGER values): JS builds it after the
/// call from the ROW_FORM code returned and the one other value, held, which the call
/// returns; that saves calling the maker. The held value may be anything but a BLOB
/// (which JS would wrap as a Buffer first). None (the lane's contents then unread) for
/// any other row, or where there is no lane.
fn lane_row<'s>(stmt: &'s RawStmt, layout: &RowLayout, id: u32, lane: Lane) -> Option<(f64, Option<ValueRef<'s>>)> {
    // Without shared slots (Lane::None) there is no lane to write.
    result_slots::with_shared(|slots| {
        let slots = slots?;
        let mut held = None;
        for (at, &(i, column)) in layout.values.iter().enumerate() {
            let value = column_value(stmt, i, column);
            match lane.bits(value) {
                Some(bits) => {
                    slots.put_i64(slot::ROW_LANE + at, bits);
                }
                None if held.is_none() && !matches!(value, ValueRef::Blob(_)) => held = Some((at, value)),
                None => return None,
            }
        }
        let place = held.map_or(0, |(at, _)| at + 1);
        // Exact as a double for any form number.
        let code = (f64::from(id) * f64::from(form::LANE_HELD_PLACES) + place as f64) * f64::from(form::LANES)
            + f64::from(lane as u32);
        Some((f64::from(form::LANE_ROW) - code, held.map(|(_, value)| value)))
    })
}

/// A lone row of form `id` made by the form's maker, its values as the arguments; its
/// numbers go through the row lane when it is there (MAKER_VALUES is within its room),
/// read by the maker of that lane.
fn maker_row(js: Napi, stmt: &RawStmt, layout: &RowLayout, id: u32, lane: Lane, safe_integers: bool) -> SResult<Raw> {
    let undefined = js.undefined()?;
    let mut values = smallvec::SmallVec::<[Raw; 16]>::with_capacity(layout.values.len());
    let mut laned = smallvec::SmallVec::<[(usize, i64); 16]>::new();
    for (at, &(i, column)) in layout.values.iter().enumerate() {
        let value = column_value(stmt, i, column);
        match lane.bits(value) {
            Some(bits) => {
                laned.push((at, bits));
                values.push(undefined);
            }
            None => values.push(value_js(js, value, safe_integers)?),
        }
    }
    let maker = maker(js, id, if laned.is_empty() { Lane::None } else { lane })?;
    // Written once the maker is known: asking JS for it the first time runs JS code.
    write_lane(&laned);
    js.call(maker, undefined, &values)
}

/// No row: `undefined`, with no form to wrap it in.
pub fn no_row(js: Napi) -> SResult<Raw> {
    result_slots::set(js, slot::ROW_FORM, -1.0)?;
    js.undefined()
}
