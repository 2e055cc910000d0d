/**
 * Every secret value this repository ships or has shipped as an example, in a file an operator reads or
 * copies (docker-compose.yml, the docs, deploy/, .env.example, the benchmarks): anyone can read them, so
 * no secret variable may hold one. `test/unit/example-secrets.spec.ts` scans those files and fails when a
 * value set there for a secret variable is not refused.
 */
export const EXAMPLE_SECRETS: readonly string[] = [
  // docker-compose.yml's default admin key before issue 35, documented in docs/operators/deployment.md
  'change-me-admin-key-0000',
  // the benchmarks' admin key before issue 35 (bench/support.mjs)
  'bench-admin-key-0123456789abcdef',
  // deploy/k8s/secret.example.yaml's placeholder
  'REPLACE_ME',
  // MinIO's and the compose database's default passwords before issue 35 (docker-compose.yml)
  'minioadmin',
  'gateway',
];

/** Words that mark a placeholder, whatever surrounds them (REPLACE_ME with …, change-me-…). */
const PLACEHOLDER = /replace[-_ ]?me|change[-_ ]?me/i;

/** Whether `value` is one of the shipped examples (case and surrounding blanks aside) or a placeholder. */
export function isExampleSecret(value: string): boolean {
  const text = value.trim().toLowerCase();
  return EXAMPLE_SECRETS.some((example) => example.toLowerCase() === text) || PLACEHOLDER.test(text);
}

/**
 * The configuration problem of a secret variable set to a shipped example, or undefined. `instead` says
 * what to set instead, e.g. `made with openssl rand -hex 32`. The value itself is never repeated.
 */
export function exampleSecretProblem(variable: string, value: string | undefined, instead: string): string | undefined {
  if (value === undefined || value === '' || !isExampleSecret(value)) return undefined;
  return `${variable} is an example value this repository ships (in its docs or deploy files), which anyone can read: set a value of your own, ${instead}`;
}
