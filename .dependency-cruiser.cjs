/**
 * The layers of src/ and what each may import (docs/contributors/architecture.md, "Layers"):
 *   src/*.ts (entry points, app module)  →  src/doors  →  src/modules  →  src/vendors  →  src/common  →  src/infra
 * Modules reach their doors only through src/doors/contracts (the registry the entry points fill).
 * Lower layers never import upper ones, and no file takes part in an import cycle. `npm test` runs this
 * first (npm run lint:deps), so a violation fails the build.
 */
module.exports = {
  forbidden: [
    {
      name: 'infra-imports-upward',
      comment: 'infra holds infrastructure (config, database, queue, storage…): it may not know the common code or the features above it.',
      severity: 'error',
      from: { path: '^src/infra/' },
      to: { path: '^src/(common|vendors|modules|doors)/|^src/[^/]+\\.ts$' },
    },
    {
      name: 'common-imports-modules',
      comment: 'common is cross-cutting (the task engine, guards, errors, swagger): features plug into it, it never imports them.',
      severity: 'error',
      from: { path: '^src/common/' },
      to: { path: '^src/(vendors|modules|doors)/|^src/[^/]+\\.ts$' },
    },
    {
      name: 'vendors-import-modules',
      comment: "vendors hold what one vendor is (its wire format, its codes): the operations use them, they never import an operation.",
      severity: 'error',
      from: { path: '^src/vendors/' },
      to: { path: '^src/(modules|doors)/|^src/[^/]+\\.ts$' },
    },
    {
      name: 'modules-import-entry-points',
      comment: 'The registry, app module and entry points at the top of src/ assemble the modules; a module never imports them.',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'modules-import-doors',
      comment: "An operation never knows its doors: it reaches a stored task's door only through src/doors/contracts (TaskDoors, the registry the entry points fill).",
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: '^src/doors/', pathNot: '^src/doors/contracts/' },
    },
    {
      name: 'door-contracts-import-upward',
      comment: 'The doors\' contract is what operations may read: it knows only the engine (common) and infra, no operation, vendor or door.',
      severity: 'error',
      from: { path: '^src/doors/contracts/' },
      to: { path: '^src/(modules|vendors)/|^src/doors/(?!contracts/)|^src/[^/]+\\.ts$' },
    },
    {
      name: 'doors-import-entry-points',
      comment: 'A door is mounted by the registry (src/doors/registry.ts) and the app module; it never imports them.',
      severity: 'error',
      from: { path: '^src/doors/(?!registry\\.ts$|doors\\.module\\.ts$)' },
      to: { path: '^src/[^/]+\\.ts$|^src/doors/(registry|doors\\.module)\\.ts$' },
    },
    {
      name: 'doors-import-other-doors',
      comment: 'A door is one folder: it shares nothing with another door but the contract (what two doors share belongs to the operation).',
      severity: 'error',
      from: { path: '^src/doors/([^/]+)/', pathNot: '^src/doors/contracts/' },
      to: { path: '^src/doors/([^/]+)/', pathNot: ['^src/doors/$1/', '^src/doors/contracts/'] },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
