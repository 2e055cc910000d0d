import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { VENDORS } from '../../src/vendors/registry.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
  });
}

/** A branch on a vendor outside its folder: a comparison with a protocol's name, a case of one, or with an adapter's protocol. */
const PROTOCOLS = VENDORS.map((v) => v.protocol).join('|');
const BRANCH = new RegExp(`(?<!door )(===|!==)\\s*'(${PROTOCOLS})'|case\\s+'(${PROTOCOLS})'|(===|!==)\\s*\\w+Vendor\\.protocol`, 'g');

/**
 * The places outside src/vendors/ that still branch on a vendor, each with why; the list may only shrink
 * (a new branch fails this test: put what it knows into the vendor's folder instead).
 */
const KNOWN: Record<string, { count: number; why: string }> = {
};

describe('the vendor layer', () => {
  it('branches on a vendor outside src/vendors/ only where the list of what is left says', () => {
    const found: Record<string, number> = {};
    for (const file of files(path.join(ROOT, 'src'))) {
      const rel = path.relative(ROOT, file).split(path.sep).join('/');
      if (rel.startsWith('src/vendors/') || rel.startsWith('src/generated/')) continue;
      const n = readFileSync(file, 'utf8').match(BRANCH)?.length ?? 0;
      if (n > 0) found[rel] = n;
    }
    expect(found).toEqual(Object.fromEntries(Object.entries(KNOWN).map(([file, { count }]) => [file, count])));
  });

  it("matches the channels table of the operators' docs: each protocol's row names its operations' base URL example and its credentials, and no row names another", () => {
    const doc = readFileSync(path.join(ROOT, 'docs/operators/channels.md'), 'utf8');
    const rows = doc
      .split('\n')
      .filter((line) => /^\| `[a-z]+` \|/.test(line) && !line.startsWith('| `protocol`'))
      .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
    expect(rows.map((r) => r[0].replace(/`/g, ''))).toEqual(VENDORS.map((v) => v.protocol));
    for (const vendor of VENDORS) {
      const [, operations, baseUrl, credentials] = rows.find((r) => r[0] === `\`${vendor.protocol}\``)!;
      for (const operation of vendor.operations) expect([vendor.protocol, operations]).toEqual([vendor.protocol, expect.stringContaining(`\`${operation}\``)]);
      if (vendor.protocol !== 'gateway') expect([vendor.protocol, baseUrl]).toEqual([vendor.protocol, expect.stringContaining(vendor.baseUrl.example)]);
      expect([vendor.protocol, credentials]).toEqual([vendor.protocol, vendor.credentials.map((c) => `\`${c}\``).join(', ')]);
    }
  });
});
