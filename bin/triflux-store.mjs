#!/usr/bin/env node
// triflux-store: look into, check, checkpoint and back up a triflux hub database.
// See `triflux-store --help` and the README section "Operating a hub database".
import { main } from '../lib/cli/main.mjs';

process.exitCode = await main(process.argv.slice(2));
