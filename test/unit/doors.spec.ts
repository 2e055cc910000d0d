import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Task, TaskTx } from '../../src/common/tasks/task-kind.js';
import type { DoorRendering } from '../../src/doors/contracts/door.js';
import { TaskDoors } from '../../src/doors/contracts/task-doors.js';
import { VENDORS } from '../../src/vendors/registry.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

// ---------------------------------------------------------------------------------------------------------------
// The registry: a stored task's door found by its kind and stored door name
// ---------------------------------------------------------------------------------------------------------------

function rendering(door: string, kind: string, fallback = false, field?: (f: string) => string): DoorRendering & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    door,
    kind,
    fallback,
    calls,
    async records(tasks: Task<any, any>[]) {
      calls.push(tasks.map((t) => t.id));
      return tasks.map((t) => `${door}:${t.id}`);
    },
    ...(field ? { field: (f: string) => field(f) } : {}),
  };
}

function task(id: string, kind: string, door?: string): Task<any, any> {
  return { id, kind, params: door === undefined ? {} : { door } } as unknown as Task<any, any>;
}

describe('TaskDoors', () => {
  it("finds a task's stored door for its kind, else the kind's fallback", () => {
    const kling = rendering('kling', 'image', true);
    const other = rendering('other', 'image');
    const doors = new TaskDoors([kling, other, rendering('kling', 'expand', true)]);
    expect(doors.of(task('a', 'image', 'other'))).toBe(other);
    expect(doors.of(task('b', 'image', 'kling'))).toBe(kling);
    // a door that renders none of the kind's tasks (OpenAI's images), and a task that stores no door
    expect(doors.of(task('c', 'image', 'openai'))).toBe(kling);
    expect(doors.of(task('d', 'image'))).toBe(kling);
  });

  it('refuses a task no door renders, naming it', () => {
    const doors = new TaskDoors([rendering('kling', 'image')]);
    expect(() => doors.of(task('t1', 'image', 'openai'))).toThrow('no door renders the image task t1 (door openai)');
    expect(() => doors.of(task('t2', 'music'))).toThrow('no door renders the music task t2');
  });

  it('refuses two renderings of one door and kind, and two fallbacks of one kind', () => {
    expect(() => new TaskDoors([rendering('kling', 'image'), rendering('kling', 'image')])).toThrow('two renderings of the image tasks of the door kling');
    expect(() => new TaskDoors([rendering('kling', 'image', true), rendering('openai', 'image', true)])).toThrow('two fallback renderings of the image tasks: the doors kling and openai');
    expect(() => new TaskDoors([rendering('kling', 'image', true), rendering('kling', 'expand', true)])).not.toThrow();
  });

  it("renders each task in its door's words, in the order asked, one call per door", async () => {
    const kling = rendering('kling', 'video', false);
    const luma = rendering('luma', 'video', true);
    const doors = new TaskDoors([kling, luma]);
    const tasks = [task('1', 'video', 'kling'), task('2', 'video'), task('3', 'video', 'kling'), task('4', 'video', 'luma')];
    expect(await doors.records(tasks)).toEqual(['kling:1', 'luma:2', 'kling:3', 'luma:4']);
    expect(kling.calls).toEqual([['1', '3']]);
    expect(luma.calls).toEqual([['2', '4']]);
    expect(await doors.records([])).toEqual([]);
  });

  it("renders a state change's notifications (a transaction given) as a door's callbacks where it words them apart, else as its records", async () => {
    const plain = rendering('suno', 'music', true);
    const calls: string[][] = [];
    const apart: DoorRendering = {
      ...rendering('sunoapi', 'music'),
      async callbacks(tasks: Task<any, any>[]) {
        calls.push(tasks.map((t) => t.id));
        return tasks.map((t) => `callback:${t.id}`);
      },
    };
    const doors = new TaskDoors([plain, apart]);
    const tasks = [task('1', 'music', 'sunoapi'), task('2', 'music')];
    const tx = {} as TaskTx;
    expect(await doors.records(tasks, tx)).toEqual(['callback:1', 'suno:2']);
    expect(calls).toEqual([['1']]);
    // without a transaction: the records (a GET, the task view)
    expect(await doors.records(tasks)).toEqual(['sunoapi:1', 'suno:2']);
    expect(calls).toEqual([['1']]);
  });

  it("words a field as the task's door names it, or as named when the door says nothing of it", () => {
    const doors = new TaskDoors([rendering('kling', 'video', false, (f) => (f === 'frames.first' ? 'image' : f)), rendering('luma', 'video', true)]);
    expect(doors.field(task('1', 'video', 'kling'), 'frames.first')).toBe('image');
    expect(doors.field(task('2', 'video'), 'frames.first')).toBe('frames.first');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Nothing outside a door branches on a door, nor outside a vendor's (or door's) folder on a vendor's name
// ---------------------------------------------------------------------------------------------------------------

/** The doors: the folders under src/doors but its contracts. */
const DOORS = readdirSync(path.join(ROOT, 'src/doors'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== 'contracts')
  .map((e) => e.name);
/** Every name a door or a vendor goes by in code: the door folders' and the vendors' protocols. */
const NAMES = [...new Set([...DOORS, ...VENDORS.map((v) => v.protocol), 'luma'])];

/** The code of a TypeScript file without its comments (a comment may name a door). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/**
 * Where `file` (a path under src/) branches on a door or on a vendor's name, outside the folders that may:
 * a comparison or switch on a door (outside src/doors), a comparison or case against a door's or vendor's
 * name (outside src/doors and src/vendors), a door name stored or typed as `door` (outside that door's folder).
 */
export function doorBranching(file: string, text: string, names: readonly string[] = NAMES): string[] {
  const inDoors = file.startsWith('src/doors/');
  const inVendors = file.startsWith('src/vendors/');
  const ownDoor = /^src\/doors\/([^/]+)\//.exec(file)?.[1];
  const name = `['"\`](${names.map((n) => n.replace(/[-.]/g, '\\$&')).join('|')})['"\`]`;
  const found: string[] = [];
  code(text)
    .split('\n')
    .forEach((line, i) => {
      const at = `${file}:${i + 1}`;
      if (!inDoors && (/\bdoor\s*[!=]==?/.test(line) || /[!=]==?\s*[\w.?]*\bdoor\b/.test(line) || /switch\s*\([^)]*\bdoor\b/.test(line))) found.push(`${at} branches on a door`);
      if (!inDoors && !inVendors && (new RegExp(`[!=]==?\\s*${name}`).test(line) || new RegExp(`${name}\\s*[!=]==?`).test(line) || new RegExp(`\\bcase\\s+${name}`).test(line))) {
        found.push(`${at} compares with a door's or vendor's name`);
      }
      for (const m of line.matchAll(new RegExp(`\\bdoor\\??\\s*:\\s*${name}`, 'g'))) if (m[1] !== ownDoor) found.push(`${at} stores or types the door ${m[1]}`);
    });
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return rel === 'src/generated' ? [] : sourceFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

describe('door branching', () => {
  it('finds each kind of branching where it is not allowed, and allows it where it is', () => {
    const names = ['kling', 'openai', 'luma'];
    expect(doorBranching('src/modules/video/video.kind.ts', "const k = tasks.filter((t) => t.params.door === 'kling');", names)).toEqual([
      'src/modules/video/video.kind.ts:1 branches on a door',
      "src/modules/video/video.kind.ts:1 compares with a door's or vendor's name",
    ]);
    expect(doorBranching('src/modules/x.ts', 'if (params.door !== other) return;', names)).toEqual(['src/modules/x.ts:1 branches on a door']);
    expect(doorBranching('src/modules/x.ts', 'switch (task.params.door) {', names)).toEqual(['src/modules/x.ts:1 branches on a door']);
    expect(doorBranching('src/common/x.ts', "if (protocol === 'openai') x();\nswitch (p) {\n  case 'luma':", names)).toEqual([
      "src/common/x.ts:1 compares with a door's or vendor's name",
      "src/common/x.ts:3 compares with a door's or vendor's name",
    ]);
    expect(doorBranching('src/modules/x.ts', "const params = { door: 'kling', n: 1 };\nexport interface P { door?: 'luma' | 'openai' }", names)).toEqual([
      'src/modules/x.ts:1 stores or types the door kling',
      'src/modules/x.ts:2 stores or types the door luma',
    ]);
    // allowed: a door in its own folder, a vendor in the vendors' folder, names in comments and examples
    expect(doorBranching('src/doors/kling/kling-images.service.ts', "const params = { door: 'kling' };", names)).toEqual([]);
    expect(doorBranching('src/vendors/kling/kling.vendor.ts', "if (protocol === 'kling') x();", names)).toEqual([]);
    expect(doorBranching('src/modules/x.ts', "// the door === 'kling' of old\n/* case 'kling': */\n@ApiProperty({ example: 'kling' })", names)).toEqual([]);
    // a door's folder may not store another door's name
    expect(doorBranching('src/doors/openai/x.ts', "const params = { door: 'kling' };", names)).toEqual(['src/doors/openai/x.ts:1 stores or types the door kling']);
  });

  it('holds in src/', () => {
    const found = sourceFiles('src').flatMap((file) => doorBranching(file, readFileSync(path.join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The doors' layers: dependency-cruiser's rules fire on a tree that breaks them (as test/unit/layers.spec.ts)
// ---------------------------------------------------------------------------------------------------------------

const run = promisify(execFile);

describe("the doors' import layers", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mgw-door-layers-'));
    await cp(path.join(ROOT, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('passes a door over its operation and an operation over the contract, and fails each break, naming the rule and the import', async () => {
    const files: Record<string, string> = {
      // allowed: door → module → vendor → common → infra; module → doors/contracts; entry point → registry → door
      'infra/db.ts': 'export const db = 1;\n',
      'common/engine.ts': "import { db } from '../infra/db.js';\nexport const engine = db;\n",
      'doors/contracts/door.ts': "import { engine } from '../../common/engine.js';\nexport const contract = engine;\n",
      'vendors/kling/wire.ts': "import { engine } from '../../common/engine.js';\nexport const wire = engine;\n",
      'modules/image/image.kind.ts': "import { wire } from '../../vendors/kling/wire.js';\nimport { contract } from '../../doors/contracts/door.js';\nexport const kind = [wire, contract];\n",
      'doors/kling/kling-images.service.ts': "import { kind } from '../../modules/image/image.kind.js';\nimport { contract } from '../contracts/door.js';\nexport const door = [kind, contract];\n",
      'doors/registry.ts': "import { door } from './kling/kling-images.service.js';\nexport const doors = [door];\n",
      'main.ts': "import { doors } from './doors/registry.js';\nexport const app = doors;\n",
      // an operation imports a door
      'doors/openai/openai.door.ts': 'export const x = 1;\n',
      'modules/m/d1.ts': "import { x } from '../../doors/openai/openai.door.js';\nexport const y = x;\n",
      // the contract imports an operation, and a door
      'modules/m/d2.ts': 'export type X = number;\n',
      'doors/contracts/d2.ts': "import type { X } from '../../modules/m/d2.js';\nexport type Y = X;\n",
      'doors/suno/d3.ts': 'export const x = 1;\n',
      'doors/contracts/d3.ts': "import { x } from '../suno/d3.js';\nexport const y = x;\n",
      // a door imports another door
      'doors/luma/d4.ts': 'export const x = 1;\n',
      'doors/kling/d4.ts': "import { x } from '../luma/d4.js';\nexport const y = x;\n",
      // a door imports the registry
      'doors/kling/d5.ts': "import { doors } from '../registry.js';\nexport const y = doors;\n",
      // vendors, common and infra import a door
      'doors/kling/d6.ts': 'export const x = 1;\n',
      'vendors/v/d6.ts': "import { x } from '../../doors/kling/d6.js';\nexport const y = x;\n",
      'common/d7.ts': "import { contract } from '../doors/contracts/door.js';\nexport const y = contract;\n",
      'infra/d8.ts': "import { contract } from '../doors/contracts/door.js';\nexport const y = contract;\n",
    };
    await rm(path.join(dir, 'src'), { recursive: true, force: true });
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, 'src', file)), { recursive: true });
      await writeFile(path.join(dir, 'src', file), text);
    }
    let output = '';
    try {
      ({ stdout: output } = await run(process.execPath, [path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), 'src', '--config', '.dependency-cruiser.cjs'], { cwd: dir }));
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    const errors = output
      .split('\n')
      .filter((line) => /^\s*error /.test(line))
      .map((line) => line.trim().replace(/\s+/g, ' '))
      .sort();
    expect(errors).toEqual([
      'error common-imports-modules: src/common/d7.ts → src/doors/contracts/door.ts',
      'error door-contracts-import-upward: src/doors/contracts/d2.ts → src/modules/m/d2.ts',
      'error door-contracts-import-upward: src/doors/contracts/d3.ts → src/doors/suno/d3.ts',
      'error doors-import-entry-points: src/doors/kling/d5.ts → src/doors/registry.ts',
      'error doors-import-other-doors: src/doors/kling/d4.ts → src/doors/luma/d4.ts',
      'error infra-imports-upward: src/infra/d8.ts → src/doors/contracts/door.ts',
      'error modules-import-doors: src/modules/m/d1.ts → src/doors/openai/openai.door.ts',
      'error vendors-import-modules: src/vendors/v/d6.ts → src/doors/kling/d6.ts',
    ]);
  }, 60_000);
});
