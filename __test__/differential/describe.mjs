// Canonical text of what a call gave, for comparing this package with better-sqlite3:
// every value by type (-0, NaN and lone surrogates kept apart), every object by its
// prototype and its own properties in order with their attributes, Buffers by their bytes,
// errors by class, name, code and message. Nothing here calls a getter of the value.

const MAX_DEPTH = 8;

function describePrototype(proto, depth) {
  if (proto === null) return 'null';
  if (proto === Object.prototype) return 'Object';
  if (proto === Array.prototype) return 'Array';
  if (proto === Buffer.prototype) return 'Buffer';
  if (proto === Error.prototype) return 'Error';
  return `(${describe(proto, depth + 1)})`;
}

function describeKey(key) {
  return typeof key === 'symbol' ? `[${String(key)}]` : JSON.stringify(key);
}

/** The canonical text of any value. */
export function describe(value, depth = 0) {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'number':
      return Object.is(value, -0) ? 'n:-0' : `n:${value}`;
    case 'bigint':
      return `b:${value}`;
    case 'boolean':
      return `t:${value}`;
    // JSON.stringify writes a lone surrogate as \udxxx, so it differs from U+FFFD.
    case 'string':
      return `s:${JSON.stringify(value)}`;
    case 'symbol':
      return `y:${String(value)}`;
    case 'function':
      return `f:${value.name}`;
    default:
      break;
  }
  if (depth > MAX_DEPTH) return '…';
  const proto = Object.getPrototypeOf(value);
  if (ArrayBuffer.isView(value)) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
    const own = Reflect.ownKeys(value).filter((k) => typeof k !== 'string' || !/^\d+$/.test(k));
    return `view<${describePrototype(proto, depth)}>:${bytes}${own.length ? `+${own.map(describeKey).join(',')}` : ''}`;
  }
  const parts = [];
  for (const key of Reflect.ownKeys(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key);
    const flags = `${d.enumerable ? 'e' : ''}${d.configurable ? 'c' : ''}${'value' in d && d.writable ? 'w' : ''}`;
    const body = 'value' in d ? describe(d.value, depth + 1) : `get${d.get ? '+' : '-'}set${d.set ? '+' : '-'}`;
    parts.push(`${describeKey(key)}/${flags}=${body}`);
  }
  const frozen = Object.isFrozen(value) ? '!frozen' : Object.isExtensible(value) ? '' : '!sealed';
  return `${Array.isArray(value) ? 'A' : 'O'}<${describePrototype(proto, depth)}>${frozen}{${parts.join(',')}}`;
}

/** The canonical text of a thrown value: its class, name, code and message. */
export function describeError(error) {
  if (error === null || typeof error !== 'object') return `throw ${describe(error)}`;
  const kinds = [TypeError, RangeError, SyntaxError, Error].filter((k) => error instanceof k).map((k) => k.name);
  const ctor = error.constructor?.name;
  return `throw ${ctor}[${kinds.join('/')}] name=${JSON.stringify(error.name)} code=${JSON.stringify(error.code)} message=${JSON.stringify(error.message)}`;
}

/** Runs `fn` and returns the canonical text of its result or of what it threw. */
export function observe(fn, as = describe) {
  let result;
  try {
    result = fn();
  } catch (error) {
    return describeError(error);
  }
  return as(result);
}
