#!/usr/bin/env node
// triflux-store: look into, check, checkpoint and back up a triflux hub database.
// See `triflux-store --help` and the README section "Operating a hub database".
import { main } from '../lib/cli/main.mjs';

// A closed pipe (`triflux-store tail db | head`) ends the command quietly; anything else
// unexpected is still one line, never a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => process.exit(error.code === 'EPIPE' ? 0 : 2));
}
process.on('uncaughtException', (error) => {
  process.stderr.write(`triflux-store: ${String(error?.message ?? error).split('\n')[0]}\n`);
  process.exit(2);
});

process.exitCode = await main(process.argv.slice(2));
