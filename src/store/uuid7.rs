//! RFC 9562 version-7 UUIDs, monotonic within the process: 48 bits of Unix
//! milliseconds, then a 12-bit per-millisecond sequence (past 4095 the clock is
//! borrowed forward by 1 ms), then 62 random bits from a pooled buffer.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

struct State {
    last_ms: u64,
    seq: u16,
    pool: [u8; 256],
    pool_pos: usize,
}

static STATE: Mutex<State> = Mutex::new(State { last_ms: 0, seq: 0, pool: [0; 256], pool_pos: 256 });

pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn random_bytes(state: &mut State, out: &mut [u8]) {
    if state.pool_pos + out.len() > state.pool.len() {
        if getrandom::fill(&mut state.pool).is_err() {
            // No OS randomness: fall back to a time-seeded xorshift rather than fail.
            let mut x = (now_ms() as u64) ^ 0x9E37_79B9_7F4A_7C15;
            for b in state.pool.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
        }
        state.pool_pos = 0;
    }
    out.copy_from_slice(&state.pool[state.pool_pos..state.pool_pos + out.len()]);
    state.pool_pos += out.len();
}

/// The raw 16 bytes of the next id.
pub fn next_bytes() -> [u8; 16] {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let now = now_ms().max(0) as u64;
    if now > state.last_ms {
        state.last_ms = now;
        state.seq = 0;
    } else {
        state.seq += 1;
        if state.seq > 0x0FFF {
            state.last_ms += 1;
            state.seq = 0;
        }
    }
    let ms = state.last_ms;
    let seq = state.seq;
    let mut bytes = [0u8; 16];
    bytes[0..6].copy_from_slice(&ms.to_be_bytes()[2..8]);
    bytes[6] = 0x70 | ((seq >> 8) as u8 & 0x0F);
    bytes[7] = seq as u8;
    let mut rand = [0u8; 8];
    random_bytes(&mut state, &mut rand);
    bytes[8..16].copy_from_slice(&rand);
    bytes[8] = 0x80 | (bytes[8] & 0x3F);
    bytes
}

/// The next id as a lowercase hyphenated string.
pub fn next() -> String {
    uuid::Uuid::from_bytes(next_bytes()).hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_and_strictly_increasing() {
        let mut prev = String::new();
        for _ in 0..10_000 {
            let id = next();
            assert_eq!(id.len(), 36);
            assert_eq!(&id[14..15], "7");
            assert!("89ab".contains(&id[19..20]));
            assert!(id > prev, "{id} <= {prev}");
            prev = id;
        }
    }

    #[test]
    fn embedded_time_is_now() {
        let id = next();
        let hex: String = id.chars().filter(|c| *c != '-').take(12).collect();
        let ms = i64::from_str_radix(&hex, 16).unwrap();
        assert!((ms - now_ms()).abs() < 5_000);
    }
}
