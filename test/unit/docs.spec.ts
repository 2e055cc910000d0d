import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../src/common/errors/app-error.js';
import { describeError } from '../../src/common/errors/error-catalog.js';
import { MetricsService } from '../../src/infra/metrics/metrics.service.js';
import { ChannelMetrics } from '../../src/modules/channels/channel-metrics.js';
import { WaitingMetrics } from '../../src/modules/upstream-watch/waiting-metrics.js';
import { knownVariables } from '../support/known-variables.js';

const ROOT = path.resolve(new URL('../..', import.meta.url).pathname);
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
export const README_BUDGET_LINES = 150;

/** The Markdown files the docs test reads: the README, every page under docs/, and the deploy guide. */
function markdownFiles(): Map<string, string> {
  const files = new Map<string, string>([['README.md', read('README.md')], ['deploy/README.md', read('deploy/README.md')]]);
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) files.set(rel, read(rel));
    }
  };
  walk('docs');
  return files;
}

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped (but - and _), spaces to hyphens. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings (a repeated heading gets -1, -2 … as on GitHub). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, text] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = slugOf(text.replace(/`/g, ''));
    const n = seen.get(slug) ?? 0;
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  return anchors;
}

/** Every relative link of these pages that names no file, or an anchor its page does not have. */
export function brokenLinks(files: Map<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of files) {
    for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto
      const [pathPart, anchor] = target.split('#') as [string, string | undefined];
      const resolved = pathPart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
      const page = files.get(resolved);
      if (page === undefined) {
        problems.push(`${file}: link to ${target}: no such page (${resolved})`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(page).has(anchor)) problems.push(`${file}: link to ${target}: ${resolved} has no heading #${anchor}`);
    }
  }
  return problems;
}

/** The variables a page's configuration table lists (rows starting with a variable in backticks). */
export function tableVariables(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
}

/** Variables the code reads and the table does not list, and the reverse. */
export function variableDrift(listed: string[], known: Set<string>): string[] {
  const table = new Set(listed);
  return [...[...known].filter((v) => !table.has(v)).map((v) => `${v}: read by the service, not in the table`), ...listed.filter((v) => !known.has(v)).map((v) => `${v}: in the table, not read by the service`)];
}

export function overBudget(readme: string, budget = README_BUDGET_LINES): string | null {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  return lines > budget ? `README.md has ${lines} lines, over its budget of ${budget}` : null;
}


/** The metrics the service declares (its own, not Node's defaults). */
function declaredMetrics(): string[] {
  const service = new MetricsService();
  new ChannelMetrics(service, {} as never);
  new WaitingMetrics(service, {} as never);
  return (service.registry.getMetricsAsArray() as unknown as { name: string }[]).map((m) => m.name).filter((n) => n.startsWith('mgw_') && !/^mgw_(process|nodejs)_/.test(n));
}

describe('the docs', () => {
  const files = markdownFiles();
  const configuration = read('docs/operators/configuration.md');

  it(`keeps the README within ${README_BUDGET_LINES} lines, with the two set-up commands and a link to every page under docs/`, () => {
    const readme = read('README.md');
    expect(overBudget(readme)).toBeNull();
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm install && npm test');
    const linked = new Set([...readme.matchAll(/\]\((docs\/[^)#]+)/g)].map((m) => m[1]));
    expect([...files.keys()].filter((f) => f.startsWith('docs/') && !linked.has(f))).toEqual([]);
  });

  it('has no broken link or anchor between its pages', () => {
    expect(brokenLinks(files)).toEqual([]);
  });

  it('lists in the configuration page every variable the service reads, and none it does not', () => {
    expect(variableDrift(tableVariables(configuration), knownVariables())).toEqual([]);
  });

  it('keeps .env.example and the configuration page to the same variables', () => {
    // a variable commented out there (# S3_BUCKET=media) is one set only in some deployments
    const example = new Set([...read('.env.example').matchAll(/^(?:# ?)?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    expect(tableVariables(configuration).sort()).toEqual([...example].sort());
  });

  it('lists every metric the service declares in the observability page', () => {
    const page = read('docs/operators/observability.md');
    const metrics = declaredMetrics();
    expect(metrics.length).toBeGreaterThan(10);
    expect(metrics.filter((m) => !page.includes(`| \`${m}\` |`))).toEqual([]);
  });

  it('lists every error code as the filter answers it', () => {
    const page = read('docs/callers/shared.md');
    for (const code of ERROR_CODES) {
      const e = describeError(code);
      expect(page).toContain(`| ${e.status} | ${e.code} | ${e.name} | ${e.meaning} |`);
    }
  });

  describe('fails on each kind of breakage', () => {
    const pages = () => new Map<string, string>([
      ['README.md', '# T\n\nSee [a](docs/a.md#section-two) and [b](docs/b.md).\n'],
      ['docs/a.md', '# A\n\n## Section two\n\n[back](../README.md#t)\n'],
      ['docs/b.md', '# B\n'],
    ]);

    it('passes the sound pages', () => {
      expect(brokenLinks(pages())).toEqual([]);
    });

    it('a link to a page that is not there', () => {
      const broken = pages();
      broken.delete('docs/b.md');
      expect(brokenLinks(broken)).toEqual([expect.stringMatching(/^README\.md: link to docs\/b\.md: no such page/)]);
    });

    it('an anchor the page does not have', () => {
      const broken = pages();
      broken.set('docs/a.md', '# A\n\n## Section 2\n\n[back](../README.md#t)\n');
      expect(brokenLinks(broken)).toEqual(['README.md: link to docs/a.md#section-two: docs/a.md has no heading #section-two']);
    });

    it('a variable the service reads that the table leaves out, and one it lists that nothing reads', () => {
      expect(variableDrift(['PORT', 'OLD_VARIABLE'], new Set(['PORT', 'NEW_VARIABLE']))).toEqual(['NEW_VARIABLE: read by the service, not in the table', 'OLD_VARIABLE: in the table, not read by the service']);
      expect(variableDrift(tableVariables(configuration), new Set([...knownVariables(), 'A_VARIABLE_ADDED']))).toEqual(['A_VARIABLE_ADDED: read by the service, not in the table']);
    });

    it('a README one line over its budget', () => {
      const lines = (n: number) => `${Array.from({ length: n }, (_, i) => `line ${i}`).join('\n')}\n`;
      expect(overBudget(lines(README_BUDGET_LINES))).toBeNull();
      expect(overBudget(lines(README_BUDGET_LINES + 1))).toBe(`README.md has ${README_BUDGET_LINES + 1} lines, over its budget of ${README_BUDGET_LINES}`);
    });
  });
});
