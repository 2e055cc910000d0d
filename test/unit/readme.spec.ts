import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../src/common/errors/app-error.js';
import { describeError } from '../../src/common/errors/error-catalog.js';
import { TASK_KIND_MODULES } from '../../src/modules/task-kinds.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('README stays true', () => {
  const readme = read('README.md');

  it('lists every error code as the filter answers it', () => {
    for (const code of ERROR_CODES) {
      const e = describeError(code);
      expect(readme).toContain(`| ${e.status} | ${e.code} | ${e.name} | ${e.meaning} |`);
    }
  });

  it('documents every variable of .env.example, and .env.example every variable the README names', () => {
    const example = [...read('.env.example').matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]);
    const table = [...readme.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(table.sort()).toEqual(example.sort());
  });

  it("documents every variable each registered task kind reads (its deadline, cap, provider, upstream, prices and own settings)", () => {
    const table = new Set([...readme.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    for (const { kind } of TASK_KIND_MODULES) {
      const { prefix, prices, relays, options, costRouting } = kind.definition.settings;
      const upstream = [...(relays === false ? [] : [`${prefix}_PROVIDER`, `RELAY_${prefix}_URL`]), ...(costRouting ? [`${prefix}_ROUTING`] : [])];
      for (const name of [`${prefix}_TIMEOUT_S`, `${prefix}_MAX_RUNNING`, ...upstream, ...Object.values(prices).map((p) => p.env), ...Object.values(options ?? {}).map((o) => o.env)]) expect([kind.definition.name, name, table.has(name)]).toEqual([kind.definition.name, name, true]);
    }
  });

  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm install && npm test');
  });
});
