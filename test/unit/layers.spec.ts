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
 * The check that guards the layers in `npm test` (its pretest runs `npm run lint:deps` on src/) fails when they
 * are broken: the same rules, run once on a small tree where each rule is broken in a place of its own, beside
 * files whose imports go down the layers. Each rule must fire, on its own files only, and nothing else.
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

  it('passes imports that go down the layers, and fails each break of a rule, naming the rule and the import', async () => {
    const result = await tree({
      // down the layers: entry point → module → vendor → common → infra
      'infra/db.ts': 'export const db = 1;\n',
      'common/engine.ts': "import { db } from '../infra/db.js';\nexport const engine = db;\n",
      'vendors/kling/wire.ts': "import { engine } from '../../common/engine.js';\nexport const wire = engine;\n",
      'modules/video/video.kind.ts': "import { wire } from '../../vendors/kling/wire.js';\nexport const kind = wire;\n",
      'main.ts': "import { kind } from './modules/video/video.kind.js';\nexport const app = kind;\n",
      // infra imports common
      'common/up1.ts': 'export const x = 1;\n',
      'infra/up1.ts': "import { x } from '../common/up1.js';\nexport const y = x;\n",
      // infra imports a module
      'modules/m/up2.ts': 'export const x = 1;\n',
      'infra/up2.ts': "import { x } from '../modules/m/up2.js';\nexport const y = x;\n",
      // common imports a module (type only)
      'modules/m/up3.ts': 'export type X = number;\n',
      'common/up3.ts': "import type { X } from '../modules/m/up3.js';\nexport type Y = X;\n",
      // common imports a vendor
      'vendors/v/up5.ts': 'export const x = 1;\n',
      'common/up5.ts': "import { x } from '../vendors/v/up5.js';\nexport const y = x;\n",
      // a vendor imports a module
      'modules/m/up6.ts': 'export const x = 1;\n',
      'vendors/v/up6.ts': "import { x } from '../../modules/m/up6.js';\nexport const y = x;\n",
      // a module imports the registry at the top
      'kinds.ts': 'export const kinds = [];\n',
      'modules/m/up4.ts': "import { kinds } from '../../kinds.js';\nexport const y = kinds;\n",
      // two modules import each other
      'modules/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'modules/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    });
    expect(result.ok).toBe(false);
    const errors = result.output.split('\n').filter((line) => /^\s*error /.test(line)).map((line) => line.trim().replace(/\s+/g, ' ')).sort();
    expect(errors).toEqual([
      expect.stringMatching(/^error common-imports-modules: src\/common\/up3\.ts → src\/modules\/m\/up3\.ts$/),
      expect.stringMatching(/^error common-imports-modules: src\/common\/up5\.ts → src\/vendors\/v\/up5\.ts$/),
      expect.stringMatching(/^error infra-imports-upward: src\/infra\/up1\.ts → src\/common\/up1\.ts$/),
      expect.stringMatching(/^error infra-imports-upward: src\/infra\/up2\.ts → src\/modules\/m\/up2\.ts$/),
      expect.stringMatching(/^error modules-import-entry-points: src\/modules\/m\/up4\.ts → src\/kinds\.ts$/),
      // a cycle is reported once, from its first file (the rest of it on the lines after)
      expect.stringMatching(/^error no-circular: src\/modules\/a\.ts →$/),
      expect.stringMatching(/^error vendors-import-modules: src\/vendors\/v\/up6\.ts → src\/modules\/m\/up6\.ts$/),
    ]);
    expect(result.output).toMatch(/error no-circular: src\/modules\/a\.ts →\s*\n\s*src\/modules\/b\.ts →\s*\n\s*src\/modules\/a\.ts\n/);
    expect(result.output).toMatch(/x 7 dependency violations \(7 errors, 0 warnings\)/);
  }, 60_000);
});
