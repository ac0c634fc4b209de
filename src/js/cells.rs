//! Safe-integer rows (`stmt.safeIntegers()`) leave Rust as cells in memory shared with JS
//! instead of JS values made one by one: each value is 8 bytes (an INTEGER's i64, a REAL's
//! f64 bits) plus a type byte, and TEXT/BLOB values go in order into one JSON text (its
//! markers as in `json_out`). JS reads an INTEGER cell as a BigInt straight from a
//! BigInt64Array view, so a row costs no Node-API call per value.
//!
//! Layout of the shared ArrayBuffer of capacity C cells: bytes [0, 8C) the cells (native
//! byte order, as typed arrays read them), then C type bytes. A result that needs more cells gets a bigger buffer (the old one stays
//! allocated until the thread ends, see `napi::SharedMemory`); the CELLS_GEN result slot
//! counts buffers, and JS fetches the new one (`native.cellBuffer()`) when it changes.

use std::cell::RefCell;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rusqlite::types::ValueRef;

use crate::error::SResult;
use crate::js::create::Made;
use crate::js::json_out::JsonOut;
use crate::js::napi::{Napi, Raw, SharedMemory};
use crate::js::slots;

pub const NULL: u8 = 0;
pub const INTEGER: u8 = 1;
pub const REAL: u8 = 2;
/// The next value of the side JSON text (TEXT or BLOB).
pub const SIDE: u8 = 3;

const MIN_CELLS: usize = 256;

#[derive(Default)]
struct Shared {
    current: Option<SharedMemory>,
    retired: Vec<SharedMemory>,
    generation: u32,
    /// The runtime refused external buffers: callers build JS values instead.
    refused: bool,
}

thread_local! {
    static SHARED: RefCell<Shared> = RefCell::default();
}

/// Whether results can travel as cells in this environment (tried once).
pub fn available(js: Napi) -> bool {
    SHARED.with(|shared| {
        let mut shared = shared.borrow_mut();
        if shared.current.is_none() && !shared.refused {
            let _ = grow(js, &mut shared, MIN_CELLS);
        }
        shared.current.is_some()
    })
}

fn grow(js: Napi, shared: &mut Shared, cells: usize) -> SResult<()> {
    match SharedMemory::new(js, cells * 9)? {
        Some(memory) => {
            if let Some(old) = shared.current.replace(memory) {
                shared.retired.push(old);
            }
            shared.generation += 1;
            slots::set(js, slots::CELLS_GEN, f64::from(shared.generation))
        }
        None => {
            shared.refused = true;
            Ok(())
        }
    }
}

/// `native.cellBuffer()`: the current shared ArrayBuffer (undefined before any).
#[napi]
pub fn cell_buffer(env: Env) -> Result<Made> {
    let js = Napi::new(env.raw());
    let buffer = SHARED.with(|shared| match &shared.borrow().current {
        Some(memory) => memory.buffer(js),
        None => js.undefined(),
    });
    buffer
        .map(Made)
        .map_err(|_| Error::from_reason("could not read the shared cell buffer"))
}

/// The cells of one result, gathered before they are published.
#[derive(Default)]
pub struct Cells {
    bits: Vec<u64>,
    types: Vec<u8>,
    side: Option<JsonOut>,
}

thread_local! {
    /// The last result's emptied lists, reused by the next (no allocation per call).
    static SPARE: RefCell<Option<(Vec<u64>, Vec<u8>)>> = const { RefCell::new(None) };
}

impl Cells {
    /// Empty cells, on this thread's spare lists when there are some.
    pub fn new() -> Self {
        let (bits, types) = SPARE.with(|spare| spare.borrow_mut().take()).unwrap_or_default();
        Cells {
            bits,
            types,
            side: None,
        }
    }

    pub fn push(&mut self, v: ValueRef<'_>) {
        let (ty, bits) = match v {
            ValueRef::Null => (NULL, 0),
            ValueRef::Integer(n) => (INTEGER, n as u64),
            ValueRef::Real(f) => (REAL, f.to_bits()),
            ValueRef::Text(_) | ValueRef::Blob(_) => {
                self.side_item().value(v);
                (SIDE, 0)
            }
        };
        self.types.push(ty);
        self.bits.push(bits);
    }

    /// Appends the keys of the rows after the side values (a shape the registry could not
    /// number travels this way).
    pub fn push_keys<'k>(&mut self, keys: impl Iterator<Item = &'k str>) {
        let out = self.side_item();
        out.buf.push('[');
        for (i, key) in keys.enumerate() {
            if i > 0 {
                out.buf.push(',');
            }
            out.str(key);
        }
        out.buf.push(']');
    }

    fn side_item(&mut self) -> &mut JsonOut {
        let out = self.side.get_or_insert_with(|| {
            let mut out = JsonOut::new();
            out.buf.push('[');
            out
        });
        if out.buf.len() > 1 {
            out.buf.push(',');
        }
        out
    }

    /// Copies the cells into the shared buffer (a bigger one if needed) and returns the
    /// side JSON text, or undefined when there is none.
    pub fn publish(self, js: Napi) -> SResult<Raw> {
        let n = self.bits.len();
        SHARED.with(|shared| -> SResult<()> {
            let mut shared = shared.borrow_mut();
            let capacity = shared.current.as_ref().map_or(0, |m| m.len() / 9);
            if n > capacity {
                grow(js, &mut shared, n.max(capacity * 2).max(MIN_CELLS))?;
            }
            let Some(memory) = shared.current.as_ref() else {
                return Err(crate::error::StoreError::error("no shared cell buffer"));
            };
            let capacity = memory.len() / 9;
            if !memory.write_words(0, &self.bits) || !memory.write(8 * capacity, &self.types) {
                return Err(crate::error::StoreError::error("the shared cell buffer is too small"));
            }
            Ok(())
        })?;
        let Cells {
            mut bits,
            mut types,
            side,
        } = self;
        bits.clear();
        types.clear();
        SPARE.with(|spare| *spare.borrow_mut() = Some((bits, types)));
        match side {
            Some(mut out) => {
                out.buf.push(']');
                js.string_utf8(out.finish().as_bytes())
            }
            None => js.undefined(),
        }
    }
}
