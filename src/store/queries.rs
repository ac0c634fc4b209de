//! Statement helpers shared by the store modules: every statement is prepared once
//! (rusqlite's per-connection cache) and rows are written straight to JSON text.

use std::borrow::Cow;
use std::rc::Rc;

use rusqlite::{CachedStatement, Connection};

use crate::js::bind::{apply, bind_all, bind_args, bind_args_with, Anonymous, Arg, Bound};
use crate::js::json_out::{write_row, JsonOut, RowShape};
use crate::js::model::Val;
use crate::sqlite::error::SResult;

pub fn prepare<'c>(conn: &'c Connection, sql: &str) -> SResult<CachedStatement<'c>> {
    Ok(conn.prepare_cached(sql)?)
}

/// Runs a write with store-computed parameters; returns the change count.
pub fn run(conn: &Connection, sql: &str, params: &[Bound]) -> SResult<usize> {
    let mut stmt = prepare(conn, sql)?;
    bind_all(&mut stmt, params)?;
    Ok(stmt.raw_execute()?)
}

/// Runs a write whose parameters are the caller's JS arguments, bound with
/// better-sqlite3's rules (as the original's `S.x.run(a, b)` did).
pub fn run_args(conn: &Connection, sql: &str, args: &[Arg<'_>]) -> SResult<usize> {
    let mut stmt = prepare(conn, sql)?;
    let values = bind_args(&stmt, args)?;
    apply(&mut stmt, &values)?;
    Ok(stmt.raw_execute()?)
}

/// Writes the rows of a query, bound with the caller's arguments (better-sqlite3's
/// rules), as a JSON array; returns the row count.
pub fn write_rows(
    out: &mut JsonOut,
    conn: &Connection,
    sql: &str,
    args: &[Arg<'_>],
    shape: &RowShape,
) -> SResult<usize> {
    let mut stmt = prepare(conn, sql)?;
    let values = bind_args(&stmt, args)?;
    apply(&mut stmt, &values)?;
    all_rows(out, stmt, shape)
}

/// Writes every row of a bound statement as a JSON array; returns the row count.
pub fn all_rows(out: &mut JsonOut, mut stmt: CachedStatement<'_>, shape: &RowShape) -> SResult<usize> {
    let mut rows = stmt.raw_query();
    let mut n = 0;
    out.buf.push('[');
    while let Some(row) = rows.next()? {
        if n > 0 {
            out.buf.push(',');
        }
        write_row(out, row, shape)?;
        n += 1;
    }
    out.buf.push(']');
    Ok(n)
}

/// The first row of a query as JSON text (`null` when there is none).
pub fn row_text(conn: &Connection, sql: &str, args: &[Arg<'_>], shape: &RowShape) -> SResult<String> {
    let mut stmt = prepare(conn, sql)?;
    let values = bind_args(&stmt, args)?;
    apply(&mut stmt, &values)?;
    let mut rows = stmt.raw_query();
    let mut out = JsonOut::new();
    match rows.next()? {
        Some(row) => write_row(&mut out, row, shape)?,
        None => out.null(),
    }
    Ok(out.finish())
}

/// All rows of a query as a JSON array text.
pub fn rows_text(conn: &Connection, sql: &str, args: &[Arg<'_>], shape: &RowShape) -> SResult<String> {
    let mut out = JsonOut::new();
    write_rows(&mut out, conn, sql, args, shape)?;
    Ok(out.finish())
}

/// [`rows_text`] for a statement that reuses numbered parameters (`?1 … ?n`) where the
/// original had `n` anonymous ones: the caller's values bind as they bound there.
pub fn rows_text_numbered(
    conn: &Connection,
    sql: &str,
    n: usize,
    args: &[Arg<'_>],
    shape: &RowShape,
) -> SResult<String> {
    let mut stmt = prepare(conn, sql)?;
    let values = bind_args_with(&Anonymous(n), args)?;
    apply(&mut stmt, &values)?;
    let mut out = JsonOut::new();
    all_rows(&mut out, stmt, shape)?;
    Ok(out.finish())
}

/// How many rows a query yields, without shaping them (errors raised while stepping,
/// such as malformed JSON in `json_each`, still surface).
pub fn row_count(conn: &Connection, sql: &str, args: &[Arg<'_>]) -> SResult<usize> {
    let mut stmt = prepare(conn, sql)?;
    let values = bind_args(&stmt, args)?;
    apply(&mut stmt, &values)?;
    let mut rows = stmt.raw_query();
    let mut n = 0;
    while rows.next()?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// The one row of a statement of integer columns (NULL read as 0).
pub fn int_row(conn: &Connection, sql: &str) -> SResult<Vec<i64>> {
    let mut stmt = prepare(conn, sql)?;
    let n = stmt.column_count();
    let mut rows = stmt.raw_query();
    let row = rows.next()?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
    Ok((0..n)
        .map(|i| row.get::<_, Option<i64>>(i).map(|v| v.unwrap_or(0)))
        .collect::<Result<Vec<i64>, _>>()?)
}

/// A single integer (COUNT(*) and friends).
pub fn count(conn: &Connection, sql: &str, params: &[Bound]) -> SResult<i64> {
    let mut stmt = prepare(conn, sql)?;
    bind_all(&mut stmt, params)?;
    let mut rows = stmt.raw_query();
    match rows.next()? {
        Some(row) => Ok(row.get::<_, Option<i64>>(0)?.unwrap_or(0)),
        None => Ok(0),
    }
}

/// A row read as JS values by column name: the one row reader of the store's
/// read-modify-write methods. Rows shaped for output (parsed `*_json` columns) also
/// carry their JSON; raw rows write theirs from the values when returned.
pub struct Row {
    names: Rc<[String]>,
    values: Vec<Val>,
    shaped_json: Option<String>,
}

impl Row {
    /// The column's value (`undefined` for a column the row lacks, as in JS).
    pub fn get(&self, name: &str) -> Val {
        match self.names.iter().position(|n| n == name) {
            Some(i) => self.values.get(i).cloned().unwrap_or(Val::Undefined),
            None => Val::Undefined,
        }
    }

    /// The row as JSON text (with the marker prefix when it holds a BLOB).
    pub fn json(&self) -> Cow<'_, str> {
        if let Some(j) = &self.shaped_json {
            return Cow::Borrowed(j);
        }
        let mut out = JsonOut::new();
        out.raw("{");
        let mut first = true;
        for (name, value) in self.names.iter().zip(&self.values) {
            out.key(&mut first, name);
            value.write_json(&mut out);
        }
        out.raw("}");
        Cow::Owned(out.finish())
    }
}

/// Reads the rows of a query bound with the caller's arguments (better-sqlite3 rules);
/// `limit` stops early (1 for a `.get()`). Text is decoded as V8 decodes it, so a row
/// holding invalid UTF-8 (a lone surrogate written by a caller) reads like in JS.
pub fn read_rows(
    conn: &Connection,
    sql: &str,
    args: &[Arg<'_>],
    shape: &RowShape,
    limit: Option<usize>,
) -> SResult<Vec<Row>> {
    read_rows_where(conn, sql, args, shape, limit, |_| Ok(true))
}

/// [`read_rows`] keeping only the rows `keep` accepts (a JS `.filter` over the rows);
/// a row's shaped JSON is written only once it is kept.
pub fn read_rows_where(
    conn: &Connection,
    sql: &str,
    args: &[Arg<'_>],
    shape: &RowShape,
    limit: Option<usize>,
    mut keep: impl FnMut(&Row) -> SResult<bool>,
) -> SResult<Vec<Row>> {
    let mut stmt = prepare(conn, sql)?;
    let values = bind_args(&stmt, args)?;
    apply(&mut stmt, &values)?;
    let names: Rc<[String]> = stmt.column_names().map(|s| s.to_string()).collect();
    let raw = shape.json.is_empty() && !shape.reflexion_type;
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(names.len());
        for i in 0..names.len() {
            values.push(Val::from_column(row.get_ref(i)?));
        }
        let mut read = Row {
            names: names.clone(),
            values,
            shaped_json: None,
        };
        if !keep(&read)? {
            continue;
        }
        if !raw {
            let mut json = JsonOut::new();
            write_row(&mut json, row, shape)?;
            read.shaped_json = Some(json.finish());
        }
        out.push(read);
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
    }
    Ok(out)
}

/// The first row of a query, if any.
pub fn read_row(conn: &Connection, sql: &str, args: &[Arg<'_>], shape: &RowShape) -> SResult<Option<Row>> {
    Ok(read_rows(conn, sql, args, shape, Some(1))?.pop())
}
