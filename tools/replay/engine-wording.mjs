// Error messages in the running engine's own words. The traces were recorded on Node (V8):
// a TypeError the engine itself raises (destructuring undefined, reading a property of
// null, JSON.stringify of a BigInt…) is worded by V8 there. Another engine (JavaScriptCore
// in Bun) raises the same TypeError for the same operation with its own text. A recorded
// message is therefore recognised as one of the operations below, that operation is
// performed here, in the running engine, and the replayed message is accepted when it is
// what this engine says for it. On V8 that is the recorded message itself, so nothing
// else is ever accepted there.

const IDENT = String.raw`[A-Za-z_$][\w$]*`;
const NULLISH = String.raw`undefined|null`;

/**
 * The operations the original's own code can fail on with an engine-worded TypeError:
 * each with V8's wording (a pattern whose groups name the operands) and the source of the
 * same operation, written with those operands.
 */
const OPERATIONS = [
  {
    what: 'destructuring a parameter',
    v8: new RegExp(`^Cannot destructure property '(?<p>${IDENT})' of '(?:undefined|object null)' as it is (?<value>${NULLISH})\\.$`),
    sources: ({ p, value }) => [`(function ({ ${p} }) {})(${value});`],
  },
  {
    what: 'destructuring a parameter that defaults to {}',
    v8: new RegExp(`^Cannot destructure property '(?<p>${IDENT})' of '\\(intermediate value\\)\\(intermediate value\\)\\(intermediate value\\)' as it is null\\.$`),
    sources: ({ p }) => [`(function (_, { ${p} } = {}) {})(0, null);`],
  },
  {
    what: 'destructuring a variable',
    v8: new RegExp(`^Cannot destructure property '(?<p>${IDENT})' of '(?<v>${IDENT})' as it is (?<value>${NULLISH})\\.$`),
    sources: ({ p, v, value }) => [`(function (${v}) { const { ${p}: _ } = ${v}; })(${value});`],
  },
  {
    what: 'reading a property',
    v8: new RegExp(`^Cannot read properties of (?<value>${NULLISH}) \\(reading '(?<p>${IDENT})'\\)$`),
    sources: ({ p, value }) => [`(function (v) { return v.${p}; })(${value});`],
  },
  {
    // V8 words this one as a property read.
    what: 'destructuring a property with a default',
    v8: new RegExp(`^Cannot read properties of (?<value>${NULLISH}) \\(reading '(?<p>${IDENT})'\\)$`),
    sources: ({ p, value }) => [`(function ({ ${p} = 0 }) {})(${value});`],
  },
  {
    what: 'Object.keys of undefined or null',
    v8: /^Cannot convert undefined or null to object$/,
    sources: () => ['Object.keys(undefined);', 'Object.keys(null);'],
  },
  {
    what: 'calling what is not a function',
    v8: new RegExp(`^(?<callee>${IDENT}(?:\\.${IDENT})*) is not a function$`),
    sources: ({ callee }) => {
      // The callee path rebuilt as objects ending in the non-function value.
      const [first, ...rest] = callee.split('.');
      const nest = (value) => rest.reduceRight((inner, key) => `{ ${key}: ${inner} }`, value);
      return ['undefined', 'null'].map((value) => `(function () { const ${first} = ${nest(value)}; ${callee}(); })();`);
    },
  },
  {
    what: 'JSON.stringify of a BigInt',
    v8: /^Do not know how to serialize a BigInt$/,
    sources: () => ['JSON.stringify(0n);'],
  },
];

/** The running engine, for the replay's output. */
export function engineName() {
  if (typeof globalThis.Bun !== 'undefined') return `JavaScriptCore (Bun ${globalThis.Bun.version})`;
  if (typeof globalThis.Deno !== 'undefined') return `V8 (Deno ${globalThis.Deno.version.deno})`;
  return `V8 (Node ${process.versions.node})`;
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The error this engine throws for `source`, or null (it did not throw, or does not parse). */
function perform(source) {
  let run;
  try {
    run = new Function(source);
  } catch {
    return null;
  }
  try {
    run();
  } catch (error) {
    return error;
  }
  return null;
}

/**
 * A pattern of this engine's message for one performed operation. JavaScriptCore quotes
 * the failing expression's source text ("null is not an object (evaluating 'v.p')"):
 * there the replayed call quotes the package's source, so a quoted text that is the
 * reproduction's own source and not in the recorded message matches any source text.
 */
function messagePattern(message, source, recorded) {
  let pattern = '';
  let last = 0;
  for (const m of message.matchAll(/'([^']+)'/g)) {
    if (!source.includes(m[1]) || recorded.includes(m[1])) continue;
    pattern += `${escapeRegExp(message.slice(last, m.index))}'.+'`;
    last = m.index + m[0].length;
  }
  return new RegExp(`^${pattern}${escapeRegExp(message.slice(last))}$`, 's');
}

const cache = new Map();

/**
 * What this engine says for the operations V8 words as `recorded`: one entry per
 * operation performed, { what, name, message, pattern }. Empty when the message is not
 * an engine-worded TypeError of the catalogue.
 */
export function reproduce(recorded) {
  if (cache.has(recorded)) return cache.get(recorded);
  const out = [];
  for (const operation of OPERATIONS) {
    const match = operation.v8.exec(recorded);
    if (!match) continue;
    for (const source of operation.sources(match.groups ?? {})) {
      const error = perform(source);
      if (!error) continue;
      out.push({ what: operation.what, name: error.name, message: error.message, pattern: messagePattern(error.message, source, recorded) });
    }
  }
  cache.set(recorded, out);
  return out;
}

/**
 * The operation whose message, in this engine's words, `actual` is while V8 words it as
 * `recorded` (both errors named `name`); null when it is not one.
 */
export function engineWorded(recorded, actual, name) {
  if (typeof recorded !== 'string' || typeof actual !== 'string') return null;
  return reproduce(recorded).find((r) => r.name === name && r.pattern.test(actual)) ?? null;
}
