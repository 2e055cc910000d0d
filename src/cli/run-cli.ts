import { AppError } from '../common/errors/app-error.js';
import { ConfigError } from '../infra/config/app-config.js';

/** Runs a command-line entry point: a bad argument or setting prints one clear line and exits 1. */
export function runCli(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      const known = err instanceof AppError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      process.stderr.write(`${known ? (err as Error).message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
