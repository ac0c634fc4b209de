// The triflux-store command: parses arguments, runs one subcommand and turns every
// failure into one line on stderr and a non-zero exit code (never a stack trace).

import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

import { CliError, EXIT_USAGE, intOption, println } from './util.mjs';

const pkg = createRequire(import.meta.url)('../../package.json');

const COMMON = {
  json: { type: 'boolean' },
  'busy-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/** name → [positional names, extra options, summary, module]. */
const COMMANDS = {
  info: [['db'], {}, 'schema version, SQLite and package versions, sizes, row counts, journal mode'],
  stats: [['db'], {}, "the store's getHubStats, getAuditStats, getQueueDepths and getDeliveryStats"],
  agents: [['db'], { now: { type: 'string' } }, 'agents with their status and lease left'],
  roles: [['db'], { now: { type: 'string' } }, 'the role registry: decoded keys, holder, state, epoch, lease, expired holders'],
  tail: [
    ['db'],
    {
      lines: { type: 'string', short: 'n' },
      agent: { type: 'string', multiple: true },
      topic: { type: 'string', multiple: true },
      type: { type: 'string', multiple: true },
      interval: { type: 'string' },
      once: { type: 'boolean' },
      limit: { type: 'string' },
      timeout: { type: 'string' },
    },
    'follow new audit messages (like tail -f), filtered by --agent, --topic, --type',
  ],
  check: [['db'], { quick: { type: 'boolean' } }, 'integrity_check, foreign_key_check and the v6 schema; exit 0 only if clean'],
  checkpoint: [['db'], { truncate: { type: 'boolean' } }, 'checkpoint the WAL (the only subcommand that writes the file)'],
  backup: [
    ['db', 'out'],
    { vacuum: { type: 'boolean' }, force: { type: 'boolean' }, step: { type: 'string' } },
    'online consistent copy while the hub writes (--vacuum: compacted copy)',
  ],
};

const USAGE = `Usage: triflux-store <command> <db> [options]

Inspect, check and back up a triflux hub database (schema ${6}) without migrating or
writing it (checkpoint is the one command that writes).

Commands:
${Object.entries(COMMANDS)
  .map(([name, [positionals, , summary]]) => `  ${`${name} ${positionals.map((p) => `<${p}>`).join(' ')}`.padEnd(22)}${summary}`)
  .join('\n')}

Options for every command:
  --json                 machine-readable output (one JSON document; tail: one per line)
  --busy-timeout <ms>    how long to wait for a lock held by the hub (default 5000)
  -h, --help             this help

  agents, roles:  --now <ms>        the clock used for "lease left" (default: now)
  tail:           -n, --lines <n>   messages shown before following (default 10)
                  --agent <id>      from or to this agent (repeatable); --topic, --type alike
                  --interval <ms>   poll interval (default 500)
                  --once            print the last messages and exit
                  --limit <n>       exit after <n> new messages; --timeout <ms>: after <ms>
  check:          --quick           quick_check instead of integrity_check
  checkpoint:     --truncate        TRUNCATE checkpoint (default PASSIVE)
  backup:         --vacuum          compacted copy (VACUUM INTO)
                  --force           replace <out> if it exists
                  --step <pages>    pages copied per step (default 100)

Exit codes: 0 ok; 1 check found problems or a checkpoint was blocked; 2 bad input.`;

/**
 * Runs the command line `argv` (without node and the script) and resolves to the exit
 * code. `io` is { stdout, stderr, isTTY } (process streams by default).
 */
export async function main(argv, io = { stdout: process.stdout, stderr: process.stderr, isTTY: Boolean(process.stderr.isTTY) }) {
  try {
    const [name, ...rest] = argv;
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      println(io.stdout, USAGE);
      return name === undefined ? EXIT_USAGE : 0;
    }
    if (name === '--version' || name === '-V') {
      println(io.stdout, `${pkg.name} ${pkg.version}`);
      return 0;
    }
    const spec = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : null;
    if (!spec) throw new CliError(`unknown command "${name}" (see triflux-store --help)`);
    const [positionals, extra] = spec;
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: { ...COMMON, ...extra }, allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(`${name}: ${error.message.split('\n')[0].split('. ')[0]}`);
    }
    const { values, positionals: args } = parsed;
    if (values.help) {
      println(io.stdout, USAGE);
      return 0;
    }
    if (args.length < positionals.length) {
      throw new CliError(`${name}: missing <${positionals[args.length]}> (usage: triflux-store ${name} ${positionals.map((p) => `<${p}>`).join(' ')})`);
    }
    if (args.length > positionals.length) throw new CliError(`${name}: unexpected argument "${args[positionals.length]}"`);
    const options = { ...values, timeout: intOption(values['busy-timeout'], 'busy-timeout') ?? 5000 };
    const command = await import(`./commands/${name}.mjs`);
    return await command.run({ args, options, io });
  } catch (error) {
    if (error instanceof CliError) {
      println(io.stderr, `triflux-store: ${error.message}`);
      return error.exitCode;
    }
    const detail = error && error.name === 'SqliteError' ? `${error.message} (${error.code})` : String(error?.message ?? error);
    println(io.stderr, `triflux-store: ${detail.split('\n')[0]}`);
    if (process.env.TRIFLUX_STORE_DEBUG) println(io.stderr, String(error?.stack));
    return EXIT_USAGE;
  }
}
