import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/infra/config/app-config.js';
import { EXAMPLE_SECRETS, exampleSecretProblem, isExampleSecret } from '../../src/infra/config/example-secrets.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The secret variables the service reads that an operator sets by hand. */
const SECRET_VARIABLES = ['ADMIN_API_KEY', 'CHANNEL_SECRET_KEY', 'CHANNEL_SECRET_KEY_PREVIOUS', 'METRICS_TOKEN'];

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv');
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

/** The files an operator reads or copies: the docs, the deploy files, the examples, the benchmarks, the console. */
function shippedFiles(): string[] {
  const files = ['README.md', '.env.example', 'docker-compose.yml', 'Dockerfile'];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(root, dir))) {
      const file = path.join(dir, name);
      if (name === 'node_modules' || name === 'dist') continue;
      if (statSync(path.join(root, file)).isDirectory()) walk(file);
      else if (/\.(md|ya?ml|json|mjs|js|ts|tsx|sh|example)$/.test(name)) files.push(file);
    }
  };
  for (const dir of ['docs', 'deploy', 'bench', 'console/src', 'scripts']) walk(dir);
  return files;
}

/** Values given to a secret variable in a file: `NAME=value`, `NAME: value`, `NAME: 'value'`, `"NAME": "value"`. */
function valuesSetIn(text: string): { variable: string; value: string }[] {
  const found: { variable: string; value: string }[] = [];
  for (const variable of [...SECRET_VARIABLES, 'ADMIN_KEY']) {
    const pattern = new RegExp(`\\b${variable}["']?[ \\t]*[=:][ \\t]*["'\`]?([^\\s"'\`,;)}]+)`, 'g');
    for (const m of text.matchAll(pattern)) found.push({ variable: variable === 'ADMIN_KEY' ? 'ADMIN_API_KEY' : variable, value: m[1] });
    // a default in a compose or shell interpolation: ${ADMIN_API_KEY:-value}
    for (const m of text.matchAll(new RegExp(`\\$\\{${variable}:?-([^}]+)\\}`, 'g'))) found.push({ variable, value: m[1] });
  }
  // interpolations and references are not values: ${VAR…}, $VAR, %s, process.env…, a code identifier or call;
  // nor are words of prose ("CHANNEL_SECRET_KEY: the former key"): every secret variable needs 16 characters or more
  // a constant's name (ADMIN_API_KEY: ADMIN_KEY) is a reference too, unless it is a placeholder (REPLACE_ME)
  const reference = (value: string) => /^(\$|%|process\.|[A-Za-z_]+\(|\w+\.\w+|<|…|\.\.\.)/.test(value) || (/^[A-Z][A-Z0-9_]*$/.test(value) && !isExampleSecret(value));
  return found.filter(({ value }) => !reference(value) && value.length >= 8);
}

describe('secret values the repository ships as examples', () => {
  it('refuses each of them for every secret variable, with a message saying how to make a good one (and not the value)', () => {
    expect(EXAMPLE_SECRETS).toContain('change-me-admin-key-0000');
    for (const example of EXAMPLE_SECRETS) {
      for (const variable of SECRET_VARIABLES) {
        for (const value of [example, ` ${example.toUpperCase()} `]) {
          const problems = problemsOf({ [variable]: value }).filter((p) => p.startsWith(`${variable} is an example`));
          expect([variable, value, problems]).toEqual([variable, value, [expect.stringMatching(/which anyone can read: set a value of your own, made with openssl rand -hex 32$/)]]);
          expect(problems[0]).not.toContain(example);
        }
      }
    }
    // placeholders however they are dressed
    for (const value of ['REPLACE_ME with a key of 32 characters', 'change-me-admin-key-0001', 'please-changeme-0123456789']) expect([value, isExampleSecret(value)]).toEqual([value, true]);
  });

  it("refuses them in every other secret variable too (a vendor's or a store's credentials, OTLP headers, the database URL)", () => {
    for (const variable of ['RELAY_API_KEY', 'RELAY_KLING_SECRET_KEY', 'S3_SECRET_ACCESS_KEY', 'S3_ACCESS_KEY_ID', 'OTEL_EXPORTER_OTLP_HEADERS', 'DATABASE_URL']) {
      const value = variable === 'OTEL_EXPORTER_OTLP_HEADERS' ? 'api-key=REPLACE_ME' : variable === 'DATABASE_URL' ? 'REPLACE_ME with postgresql://USER:PASSWORD@HOST:5432/DATABASE' : 'minioadmin';
      const problems = problemsOf({ [variable]: value }).filter((p) => p.startsWith(`${variable} is an example`));
      expect([variable, problems]).toEqual([variable, [expect.stringMatching(/set a value of your own, the one its issuer \(the vendor, the store, the database\) gave you$/)]]);
    }
    // and a bad value of a secret variable is never repeated in the message
    expect(problemsOf({ OTEL_EXPORTER_OTLP_HEADERS: 'token-s3cr3t-value' }).join('\n')).not.toContain('s3cr3t');
  });

  it('accepts fresh keys (openssl rand -hex 32), as the docs make them', () => {
    const fresh = randomBytes(32).toString('hex');
    const config = loadConfig({ ADMIN_API_KEY: fresh, CHANNEL_SECRET_KEY: randomBytes(32).toString('hex'), CHANNEL_SECRET_KEY_PREVIOUS: `${randomBytes(32).toString('hex')},${randomBytes(32).toString('base64')}` }, '/srv');
    expect([config.adminApiKey, config.sealing.key?.length, config.sealing.previousKeys.map((k) => k.length)]).toEqual([fresh, 32, [32, 32]]);
    expect(exampleSecretProblem('METRICS_TOKEN', randomBytes(24).toString('base64url'), 'made with openssl rand -hex 32')).toBeUndefined();
    expect(exampleSecretProblem('METRICS_TOKEN', undefined, 'made with openssl rand -hex 32')).toBeUndefined();
    expect(exampleSecretProblem('METRICS_TOKEN', 'REPLACE_ME', 'made with openssl rand -hex 32')).toMatch(/^METRICS_TOKEN is an example value/);
  });

  it('refuses every value set for a secret variable anywhere in the docs, deploy files, examples and benchmarks', () => {
    const files = shippedFiles();
    expect(files).toEqual(expect.arrayContaining(['docs/operators/deployment.md', 'deploy/k8s/secret.example.yaml', 'bench/support.mjs']));
    const seen: string[] = [];
    for (const file of files) {
      for (const { variable, value } of valuesSetIn(readFileSync(path.join(root, file), 'utf8'))) {
        seen.push(`${file}: ${variable}=${value}`);
        expect([file, variable, value, isExampleSecret(value)]).toEqual([file, variable, value, true]);
      }
    }
    // the scan finds what it looks for: the k8s template's placeholders, the formerly documented admin key
    expect(seen).toEqual(expect.arrayContaining(['deploy/k8s/secret.example.yaml: ADMIN_API_KEY=REPLACE_ME', 'deploy/k8s/secret.example.yaml: CHANNEL_SECRET_KEY=REPLACE_ME']));
    expect(valuesSetIn("ADMIN_API_KEY: ${ADMIN_API_KEY:?set it}\nADMIN_KEY = randomBytes(24)\nADMIN_API_KEY='s3cr3t-value-123'")).toEqual([{ variable: 'ADMIN_API_KEY', value: 's3cr3t-value-123' }]);
    // docker-compose.yml's line before issue 35
    expect(valuesSetIn('      ADMIN_API_KEY: ${ADMIN_API_KEY:-change-me-admin-key-0000}')).toEqual([{ variable: 'ADMIN_API_KEY', value: 'change-me-admin-key-0000' }]);
  });
});
