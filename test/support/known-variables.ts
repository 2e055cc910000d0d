import { readFileSync } from 'node:fs';
import { TASK_KIND_MODULES } from '../../src/modules/task-kinds.js';
import { VENDORS } from '../../src/vendors/registry.js';

/** Every variable the service reads: EnvironmentVariables' fields in app-config.ts, and those each task kind and vendor declares. */
export function knownVariables(): Set<string> {
  const source = readFileSync(new URL('../../src/infra/config/app-config.ts', import.meta.url), 'utf8');
  const body = /class EnvironmentVariables \{([\s\S]*?)\n\}/.exec(source)![1];
  const names = [...body.matchAll(/^\s+([A-Z][A-Z0-9_]*)[?!]?:/gm)].map((m) => m[1]);
  for (const { kind } of TASK_KIND_MODULES) {
    const { prefix, prices, relays, options, costRouting } = kind.definition.settings;
    names.push(`${prefix}_TIMEOUT_S`, `${prefix}_MAX_RUNNING`, ...Object.values(prices).map((p) => p.env), ...Object.values(options ?? {}).map((o) => o.env));
    if (relays !== false) names.push(`${prefix}_PROVIDER`, `RELAY_${prefix}_URL`);
    if (costRouting) names.push(`${prefix}_ROUTING`);
  }
  for (const vendor of VENDORS) names.push(...Object.values(vendor.configCredentials ?? {}));
  return new Set(names);
}
