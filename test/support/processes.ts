import { readdir, readFile } from 'node:fs/promises';

/** The pids of this machine's processes whose command line holds `marker`. */
export async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) pids.push(Number(name));
  }
  return pids;
}
