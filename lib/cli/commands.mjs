// The subcommands of triflux-store: their arguments, options and help texts, and the
// general usage. main.mjs parses with these; each command's code is commands/<name>.mjs.

import { NEWEST_SCHEMA_VERSION, OLDEST_SCHEMA_VERSION } from './open.mjs';

/** Options every subcommand takes: [parseArgs spec, flag text, help text]. */
export const COMMON = {
  json: [{ type: 'boolean' }, '--json', 'machine-readable output (one JSON document; tail: one per line)'],
  'busy-timeout': [{ type: 'string' }, '--busy-timeout <ms>', 'how long to wait for a lock held by the hub (default 5000)'],
  help: [{ type: 'boolean', short: 'h' }, '-h, --help', 'this help'],
};

const NOW = [{ type: 'string' }, '--now <ms>', 'the clock used for "lease left", in epoch ms (default: now)'];

/**
 * name → { args, summary, about, options: { name: [spec, flag, help] }, examples }.
 * `about` and the examples are what `triflux-store <name> --help` adds to the summary.
 */
export const COMMANDS = {
  info: {
    args: ['db'],
    summary: 'schema version, SQLite and package versions, sizes, row counts, journal mode',
    about: 'Reads the file without changing it.',
    options: {},
    examples: ['triflux-store info hub.db', 'triflux-store info hub.db --json'],
  },
  stats: {
    args: ['db'],
    summary: "the store's getHubStats, getAuditStats, getQueueDepths and getDeliveryStats",
    about:
      "The store's own four statistics, read in one read transaction (one state of the file,\nalso while the hub writes) on a read-only connection that never migrates the file.",
    options: {},
    examples: ['triflux-store stats hub.db', 'triflux-store stats hub.db --json'],
  },
  agents: {
    args: ['db'],
    summary: 'agents with their status and lease left',
    about: 'Every agent, as listAllAgents returns them, with the time its lease has left.',
    options: { now: NOW },
    examples: ['triflux-store agents hub.db', 'triflux-store agents hub.db --now 1700000020000'],
  },
  roles: {
    args: ['db'],
    summary: 'the role registry: decoded keys, holder, state, epoch, lease, expired holders',
    about: 'The role registry with decoded role keys; holders whose lease has expired are flagged.',
    options: { now: NOW },
    examples: ['triflux-store roles hub.db', 'triflux-store roles hub.db --json'],
  },
  tail: {
    args: ['db'],
    summary: 'follow new audit messages (like tail -f), filtered by --agent, --topic, --type',
    about:
      'Prints the last messages, then new ones as the hub writes them. Each poll is one\nautocommit SELECT: no read transaction is held between polls.',
    options: {
      lines: [{ type: 'string', short: 'n' }, '-n, --lines <n>', 'messages shown before following (default 10)'],
      agent: [{ type: 'string', multiple: true }, '--agent <id>', 'from or to this agent (repeatable)'],
      topic: [{ type: 'string', multiple: true }, '--topic <topic>', 'with this topic (repeatable)'],
      type: [{ type: 'string', multiple: true }, '--type <type>', 'of this message type (repeatable)'],
      interval: [{ type: 'string' }, '--interval <ms>', 'poll interval (default 500)'],
      once: [{ type: 'boolean' }, '--once', 'print the last messages and exit'],
      limit: [{ type: 'string' }, '--limit <n>', 'exit after <n> new messages'],
      timeout: [{ type: 'string' }, '--timeout <ms>', 'exit after <ms> of following'],
    },
    examples: ['triflux-store tail hub.db --topic ops', 'triflux-store tail hub.db -n 0 --agent codex --timeout 60000 --json'],
  },
  check: {
    args: ['db'],
    summary: "integrity_check, foreign_key_check and the schema of the file's version; exit 0 only if clean",
    about:
      'Every problem is a finding (exit 1), also an SQLite error met while checking a damaged\nfile; only a file that is not a SQLite database at all is bad input (exit 2).',
    options: { quick: [{ type: 'boolean' }, '--quick', 'quick_check instead of integrity_check'] },
    examples: ['triflux-store check hub.db', 'triflux-store check hub.db --quick --json'],
  },
  checkpoint: {
    args: ['db'],
    summary: 'checkpoint the WAL (writes the file: copies the WAL into it)',
    about:
      "Copies the WAL's frames into the database file and reports the WAL's frames before and\nafter. Exit 1 when a reader (or writer) kept the checkpoint from completing.",
    options: { truncate: [{ type: 'boolean' }, '--truncate', 'TRUNCATE checkpoint: also empty the -wal file (default PASSIVE)'] },
    examples: ['triflux-store checkpoint hub.db', 'triflux-store checkpoint hub.db --truncate --busy-timeout 10000'],
  },
  backup: {
    args: ['db', 'out'],
    summary: 'online consistent copy while the hub writes (--vacuum: compacted copy)',
    about:
      'Copies into a temporary file beside <out>, checks the copy (quick_check, row counts),\nsyncs it and renames it to <out>: <out> is never left half-written, and Ctrl-C or\nSIGTERM removes the temporary file. <out> may never be the database or one of its\n-wal, -shm, -journal files (compared by device and inode too), even with --force.\nOn POSIX the copy gets the permission bits of the database file from its first byte.',
    options: {
      vacuum: [{ type: 'boolean' }, '--vacuum', 'compacted copy (VACUUM INTO)'],
      force: [{ type: 'boolean' }, '--force', 'replace <out> if it exists'],
      step: [{ type: 'string' }, '--step <pages>', 'pages copied per step (default 100)'],
    },
    examples: ['triflux-store backup hub.db hub-copy.db', 'triflux-store backup hub.db /backups/hub.db --vacuum --force'],
  },
  'restore-schema': {
    args: ['db'],
    summary: "give a file the original store's indexes back (before rolling back to it)",
    about:
      "Drops the large-log indexes this package adds once the log reaches 10,000 messages and\nre-creates the original's indexes on messages as a fresh original store writes them, in\none transaction. Refuses (exit 1) while another connection (a running hub) has the file\nopen. Run it with the hub stopped, before starting the original store on the file; this\npackage's store converts the file again the next time it opens it.",
    options: {},
    examples: ['triflux-store restore-schema hub.db'],
  },
};

const width = 24;
const line = (flag, text) => `  ${flag.padEnd(width - 2)}${text}`;
const usageLine = (name) => `triflux-store ${name} ${COMMANDS[name].args.map((a) => `<${a}>`).join(' ')}`;

/** The parseArgs options of a subcommand (its own and the common ones). */
export function parseOptions(name) {
  const all = { ...COMMON, ...COMMANDS[name].options };
  return Object.fromEntries(Object.entries(all).map(([key, [spec]]) => [key, spec]));
}

export function usage(name) {
  return usageLine(name);
}

/** `triflux-store --help`. */
export function generalHelp() {
  return `Usage: triflux-store <command> <db> [options]

Inspect, check and back up a triflux hub database (schema ${OLDEST_SCHEMA_VERSION} to ${NEWEST_SCHEMA_VERSION}) without migrating it.
Only checkpoint and restore-schema write the file.

Commands:
${Object.entries(COMMANDS)
  .map(([name, spec]) => `  ${`${name} ${spec.args.map((a) => `<${a}>`).join(' ')}`.padEnd(width)}${spec.summary}`)
  .join('\n')}

Options for every command:
${Object.values(COMMON)
  .map(([, flag, text]) => line(flag, text))
  .join('\n')}

"triflux-store <command> --help" shows a command's own options and examples.

Exit codes: 0 ok; 1 check found problems, a checkpoint was blocked or restore-schema
found the file in use; 2 bad input.`;
}

/** `triflux-store <name> --help`. */
export function commandHelp(name) {
  const spec = COMMANDS[name];
  const own = Object.values(spec.options).map(([, flag, text]) => line(flag, text));
  const common = Object.values(COMMON).map(([, flag, text]) => line(flag, text));
  return `Usage: ${usageLine(name)} [options]

${spec.summary[0].toUpperCase()}${spec.summary.slice(1)}.
${spec.about}

Options:
${[...own, ...common].join('\n')}

Example${spec.examples.length > 1 ? 's' : ''}:
${spec.examples.map((e) => `  ${e}`).join('\n')}`;
}
