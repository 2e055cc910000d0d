import type { KindModule } from './common/tasks/task-kind.js';
import { type AppConfig, loadConfig } from './infra/config/app-config.js';
import { TASK_KIND_MODULES } from './modules/task-kinds.js';
import { VENDORS } from './vendors/registry.js';

/** The settings of the whole application: the environment's, with the settings every registered kind and vendor declares. */
export function loadAppConfig(env: Record<string, string | undefined>, options: { cwd?: string; kinds?: readonly KindModule[] } = {}): AppConfig {
  const kinds = options.kinds ?? TASK_KIND_MODULES;
  return loadConfig(env, options.cwd, kinds.map((m) => ({ name: m.kind.definition.name, ...m.kind.definition.settings })), VENDORS);
}
