// npm test runs the unit tests as this one Jest file (jest.config.js): each *.spec.ts under test/unit is
// imported here, found by name, so a new one cannot be left out. As separate files each loaded its module
// graph again in a fresh registry: 738 tests took 119 CPU-seconds as 87 files and 71 as one. Each file still
// runs alone (`npm run test:unit -- <file>`, jest.unit.config.js), and with the vendor layer's coverage.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const files = (readdirSync(here, { recursive: true }) as string[]).filter((f) => f.endsWith('.spec.ts')).sort();
for (const file of files) await import(path.join(here, file));
