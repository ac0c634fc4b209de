// The triflux-store command: parses arguments, runs one subcommand and turns every
// failure into one line on stderr and a non-zero exit code (never a stack trace).

import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

import { COMMANDS, commandHelp, generalHelp, parseOptions, usage } from './commands.mjs';
import { CliError, EXIT_USAGE, intOption, println, visible } from './util.mjs';

const pkg = createRequire(import.meta.url)('../../package.json');

/**
 * Runs the command line `argv` (without node and the script) and resolves to the exit
 * code. `io` is { stdout, stderr, isTTY } (process streams by default).
 */
export async function main(argv, io = { stdout: process.stdout, stderr: process.stderr, isTTY: Boolean(process.stderr.isTTY) }) {
  try {
    const [name, ...rest] = argv;
    if (name === undefined || name === '--help' || name === '-h') {
      println(io.stdout, generalHelp());
      return name === undefined ? EXIT_USAGE : 0;
    }
    if (name === 'help') {
      if (rest[0] === undefined) {
        println(io.stdout, generalHelp());
        return 0;
      }
      if (!Object.hasOwn(COMMANDS, rest[0])) throw new CliError(`unknown command "${rest[0]}" (see triflux-store --help)`);
      println(io.stdout, commandHelp(rest[0]));
      return 0;
    }
    if (name === '--version' || name === '-V') {
      println(io.stdout, `${pkg.name} ${pkg.version}`);
      return 0;
    }
    if (!Object.hasOwn(COMMANDS, name)) throw new CliError(`unknown command "${name}" (see triflux-store --help)`);
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: parseOptions(name), allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(`${name}: ${error.message.split('\n')[0].split('. ')[0]}`);
    }
    const { values, positionals: args } = parsed;
    if (values.help) {
      println(io.stdout, commandHelp(name));
      return 0;
    }
    const wanted = COMMANDS[name].args;
    if (args.length < wanted.length) throw new CliError(`${name}: missing <${wanted[args.length]}> (usage: ${usage(name)})`);
    if (args.length > wanted.length) throw new CliError(`${name}: unexpected argument "${args[wanted.length]}"`);
    // The lock wait is its own option: a subcommand's own options (tail --timeout) keep their values.
    const options = { ...values, busyTimeout: intOption(values['busy-timeout'], 'busy-timeout') ?? 5000 };
    const command = await import(`./commands/${name}.mjs`);
    return await command.run({ args, options, io });
  } catch (error) {
    // A message quotes paths, names and arguments: escaped whole, it stays one line.
    if (error instanceof CliError) {
      println(io.stderr, `triflux-store: ${visible(error.message)}`);
      return error.exitCode;
    }
    const detail = error && error.name === 'SqliteError' ? `${error.message} (${error.code})` : String(error?.message ?? error);
    println(io.stderr, `triflux-store: ${visible(detail.split('\n')[0])}`);
    if (process.env.TRIFLUX_STORE_DEBUG) println(io.stderr, String(error?.stack));
    return EXIT_USAGE;
  }
}
