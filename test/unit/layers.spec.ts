import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const run = promisify(execFile);

/** Runs `npm run lint:deps`'s command (dependency-cruiser with the project's rules) in `dir`; its output and whether it passed. */
async function cruise(dir: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), 'src', '--config', '.dependency-cruiser.cjs'], { cwd: dir });
    return { ok: true, output: stdout };
  } catch (err) {
    return { ok: false, output: String((err as { stdout?: string }).stdout ?? err) };
  }
}

/**
 * The layers hold (infra → nothing above it, common → not modules, no cycles), and the check that
 * guards them in `npm test` fails when they do not: the same rules, on small trees that break them.
 */
describe('import layers', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mgw-layers-'));
    await cp(path.join(ROOT, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', allowImportingTsExtensions: false } }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const tree = async (files: Record<string, string>) => {
    await rm(path.join(dir, 'src'), { recursive: true, force: true });
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, 'src', file)), { recursive: true });
      await writeFile(path.join(dir, 'src', file), text);
    }
    return cruise(dir);
  };

  it('holds in src/', async () => {
    const result = await cruise(ROOT);
    expect(result).toEqual({ ok: true, output: expect.stringContaining('no dependency violations found') });
  }, 60_000);

  it('passes a tree whose imports go down the layers', async () => {
    const result = await tree({
      'infra/db.ts': 'export const db = 1;\n',
      'common/engine.ts': "import { db } from '../infra/db.js';\nexport const engine = db;\n",
      'modules/video/video.kind.ts': "import { engine } from '../../common/engine.js';\nexport const kind = engine;\n",
      'main.ts': "import { kind } from './modules/video/video.kind.js';\nexport const app = kind;\n",
    });
    expect(result.ok).toBe(true);
  });

  it.each([
    ['infra imports common', { 'common/x.ts': 'export const x = 1;\n', 'infra/y.ts': "import { x } from '../common/x.js';\nexport const y = x;\n" }, 'infra-imports-upward'],
    ['infra imports a module', { 'modules/m/x.ts': 'export const x = 1;\n', 'infra/y.ts': "import { x } from '../modules/m/x.js';\nexport const y = x;\n" }, 'infra-imports-upward'],
    ['common imports a module (type only)', { 'modules/m/x.ts': 'export type X = number;\n', 'common/y.ts': "import type { X } from '../modules/m/x.js';\nexport type Y = X;\n" }, 'common-imports-modules'],
    ['a module imports the registry at the top', { 'kinds.ts': 'export const kinds = [];\n', 'modules/m/y.ts': "import { kinds } from '../../kinds.js';\nexport const y = kinds;\n" }, 'modules-import-entry-points'],
    ['two modules import each other', { 'modules/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n", 'modules/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n" }, 'no-circular'],
  ])('fails when %s', async (_what, files, rule) => {
    const result = await tree(files);
    expect(result.ok).toBe(false);
    expect(result.output).toContain(`error ${rule}`);
  });
});
