// What one adversarial sequence came to, from the transcripts of its two runs (this
// package's and better-sqlite3's): the same, a difference (documented or not) at its first
// differing observation, or a process that crashed or hung, this package's or the
// reference's, and whether this package used far more memory.

/**
 * Differences docs/better-sqlite3-api.md lists, each with its reason there: `match` gets
 * the first differing observation of each side (`op: text`), the observations before it,
 * the Node major version and the sequence.
 */
export const DOCUMENTED = [
  {
    id: 'reused prepare()',
    doc: 'docs/better-sqlite3-api.md',
    match: ({ ours, reference, before }) =>
      (/^prepare: stmt#/.test(ours) && /^prepare: throw SqliteError/.test(reference)) || reusedTraits(ours, reference, before),
  },
  {
    id: 'NUL in a path',
    doc: 'docs/better-sqlite3-api.md',
    match: ({ ours }) => ours.includes('The database path must not contain NUL characters'),
  },
  {
    id: "aggregate's error lost by better-sqlite3 (Node 22 and later)",
    doc: 'docs/user-functions.md',
    match: ({ ours, reference, node, sequence }) =>
      node >= 22 && /^\w+: throw /.test(ours) && !/^\w+: throw /.test(reference) && aggregateThrows(sequence),
  },
];

const SOURCE = /source\/e=s:("(?:[^"\\]|\\.)*")/;
const DATABASE = /database\/e=(db#\d+)/;

/**
 * A statement both prepared whose traits (reader, readonly) differ, of a text prepared
 * before in the sequence: this package's was compiled when the text was first prepared.
 */
function reusedTraits(ours, reference, before) {
  const [a, b] = [ours, reference].map((text) => /^prepare: (stmt#\d+) /.exec(text)?.[1]);
  const source = SOURCE.exec(ours)?.[1];
  if (!a || a !== b || !source || SOURCE.exec(reference)?.[1] !== source) return false;
  const db = DATABASE.exec(ours)?.[1];
  return before.some(([, text]) => text.startsWith('prepare: stmt#') && SOURCE.exec(text)?.[1] === source && DATABASE.exec(text)?.[1] === db);
}

/** Whether a sequence defines an aggregate one of whose callbacks throws. */
function aggregateThrows(sequence) {
  const aggregates = [];
  JSON.stringify(sequence?.steps ?? [], (key, value) => {
    if (value?.op === 'aggregate') aggregates.push(value);
    return value;
  });
  return aggregates.some((a) => [a.step, a.inverse, a.result].some((b) => b?.outcome?.throws));
}

/** A run's transcript from its file: observations, the end marker's maxRSS (KiB) or null. */
export function parseTranscript(text) {
  const lines = [];
  let maxRss = null;
  for (const line of text.split('\n')) {
    if (!line) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      entry = ['garbled', line];
    }
    if (entry[0] === 'end') maxRss = Number(entry[1]);
    else lines.push(entry);
  }
  return { lines, maxRss };
}

/** How a process ended: 'complete', 'hang' (killed at its time limit), or a crash's cause. */
function ending(run) {
  if (run.timedOut) return 'hang';
  if (run.transcript.maxRss !== null && run.code === 0) return 'complete';
  return run.signal ? `signal ${run.signal}` : `exit ${run.code}`;
}

const same = (a, b) => a[0] === b[0] && a[1] === b[1];

/** Memory worth reporting: this package's peak RSS past twice better-sqlite3's plus 64 MiB. */
export const memoryExcess = (ours, reference) => ours > 2 * reference + 64 * 1024;

/**
 * Classifies a sequence from both runs (`{ transcript, code, signal, timedOut }`):
 * `{ outcome, at, ours, reference, documented, memory }` where `outcome` is one of 'same',
 * 'difference', 'documented', 'crash', 'hang', 'reference crash', 'reference hang'.
 */
export function classify(ours, reference, { node = Number(process.versions.node.split('.')[0]), sequence = null } = {}) {
  const o = ours.transcript.lines;
  const r = reference.transcript.lines;
  const common = Math.min(o.length, r.length);
  let at = 0;
  while (at < common && same(o[at], r[at])) at += 1;
  const oursEnd = ending(ours);
  const referenceEnd = ending(reference);
  const result = { at, ours: o[at] ?? null, reference: r[at] ?? null, oursEnd, referenceEnd, documented: null, memory: null };
  if (oursEnd === 'complete' && referenceEnd === 'complete' && memoryExcess(ours.transcript.maxRss, reference.transcript.maxRss)) {
    result.memory = { ours: ours.transcript.maxRss, reference: reference.transcript.maxRss };
  }
  if (at < common) {
    const texts = { ours: o[at][1], reference: r[at][1], before: o.slice(0, at), node, sequence };
    const known = o[at][0] === r[at][0] ? DOCUMENTED.find((d) => d.match(texts)) : undefined;
    if (known) return { ...result, outcome: 'documented', documented: known.id };
    return { ...result, outcome: 'difference' };
  }
  // Every observation both made is the same: how each process ended decides.
  if (oursEnd === 'hang') return { ...result, outcome: 'hang' };
  if (oursEnd !== 'complete') return { ...result, outcome: 'crash' };
  if (referenceEnd === 'hang') return { ...result, outcome: 'reference hang' };
  if (referenceEnd !== 'complete') return { ...result, outcome: 'reference crash' };
  return { ...result, outcome: o.length === r.length ? 'same' : 'difference' };
}
