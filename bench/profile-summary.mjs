// Summarises a V8 CPU profile (.cpuprofile, from `node --cpu-prof` or bench/cpu-window.mjs): self time by
// function, by package or area, and the inclusive time of the service's own functions.
//
//   node bench/profile-summary.mjs <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';

export function summarise(file, top = 25) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ms = (profile.endTime - profile.startTime) / 1000;
  const perSample = ms / profile.samples.length;
  const keyOf = (n) => {
    const f = n.callFrame;
    const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, '$1/')}:${f.lineNumber + 1}` : '';
    return `${f.functionName || '(anonymous)'} ${where}`.trim();
  };
  const areaOf = (n) => {
    const { url, functionName } = n.callFrame;
    if (!url) return functionName.startsWith('(') ? functionName : '(native)';
    if (url.startsWith('node:')) return 'node: internals';
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1];
    const ours = /\/dist\/(.+)$/.exec(url);
    return ours ? `gateway: ${ours[1].split('/').slice(0, -1).join('/')}` : url;
  };
  const self = new Map();
  const areas = new Map();
  const inclusive = new Map();
  const add = (map, key, v) => map.set(key, (map.get(key) ?? 0) + v);
  for (const id of profile.samples) {
    const n = byId.get(id);
    add(self, keyOf(n), perSample);
    add(areas, areaOf(n), perSample);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const node = byId.get(cur);
      if (!/\/dist\//.test(node.callFrame.url)) continue;
      const key = keyOf(node);
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusive, key, perSample);
    }
  }
  const busy = ms - (self.get('(idle)') ?? 0);
  const sorted = (map, n) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  const pct = (v) => `${((100 * v) / busy).toFixed(1)} %`;
  const lines = [`${file}: ${(ms / 1000).toFixed(1)} s profiled, ${(busy / 1000).toFixed(2)} s of CPU on the main thread (not idle); shares are of that`];
  lines.push('', `Self time, top ${top}:`, ...sorted(self, top + 1).filter(([k]) => k !== '(idle)').slice(0, top).map(([k, v]) => `  ${pct(v).padStart(7)}  ${v.toFixed(0).padStart(7)} ms  ${k}`));
  lines.push('', 'Self time by package or area:', ...sorted(areas, 20).filter(([k]) => k !== '(idle)').map(([k, v]) => `  ${pct(v).padStart(7)}  ${v.toFixed(0).padStart(7)} ms  ${k}`));
  lines.push('', "Inclusive time of the service's own functions (dist/), top 20:", ...sorted(inclusive, Number(process.env.PROFILE_INCLUSIVE_TOP ?? 20)).map(([k, v]) => `  ${pct(v).padStart(7)}  ${v.toFixed(0).padStart(7)} ms  ${k}`));
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  console.log(summarise(process.argv[2], Number(process.argv[3] ?? 25)));
}
