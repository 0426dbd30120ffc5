#!/usr/bin/env node
import { rootUsage, wantsHelp } from './usage.js';
import { asofCommand } from './asof-command.js';
import { catalogCommand } from './catalog-command.js';
import { publishCommand } from './publish-command.js';
import { pruneCommand } from './prune-command.js';
import { serveCommand } from './serve-command.js';

const COMMANDS: Record<string, (argv: string[], env: NodeJS.ProcessEnv) => Promise<number>> = {
  serve: serveCommand,
  publish: publishCommand,
  asof: asofCommand,
  prune: pruneCommand,
  catalog: catalogCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || (wantsHelp([command]) && rest.length === 0)) {
    process.stdout.write(rootUsage() + '\n');
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (run === undefined) {
    process.stderr.write(`pitcache: unknown command ${JSON.stringify(command)} (see pitcache --help)\n`);
    return 2;
  }
  return run(rest, process.env);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`pitcache: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
