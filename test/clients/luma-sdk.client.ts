import LumaAI, { NotFoundError } from 'lumaai';
import type { Generation, GenerationCreateParams, GenerationListResponse } from 'lumaai/resources/generations/generations';

/**
 * What a team's existing Luma code does, written against the official `lumaai` SDK's own types with no
 * casts: `npm test` type-checks it under `strict`, and test/e2e/luma-sdk runs it against the gateway.
 */
export interface LumaRun {
  created: Generation[];
  sawDreaming: boolean;
  completed: Generation[];
  listed: GenerationListResponse;
  deletedThenMissing: boolean;
  pong: string | undefined;
  /** credits.get() before and after the two generations. */
  credits: [number, number];
  unsupported: string;
}

async function pollUntilDone(client: LumaAI, id: string, deadlineMs: number, onState: (state: Generation['state']) => void): Promise<Generation> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const generation = await client.generations.get(id);
    onState(generation.state);
    if (generation.state === 'completed' || generation.state === 'failed') return generation;
    if (Date.now() > deadline) throw new Error(`generation ${id} still ${generation.state} after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `onDreaming`: called when the poll loop first sees a generation dreaming (a test lets the held keyframe through then). */
export async function runLumaSdk(baseURL: string, authToken: string, keyframeUrl: string, onDreaming: () => void = () => undefined): Promise<LumaRun> {
  const client = new LumaAI({ authToken, baseURL, maxRetries: 0 });
  const creditsBefore = (await client.credits.get()).credit_balance;
  const promptOnly: GenerationCreateParams = { model: 'ray-2', prompt: 'A lighthouse at dusk, waves breaking', aspect_ratio: '16:9', duration: '5s', resolution: '540p' };
  const withKeyframes: GenerationCreateParams = { model: 'ray-flash-2', prompt: 'The hills at sunset, slowly', keyframes: { frame0: { type: 'image', url: keyframeUrl } }, loop: false };
  const created = [await client.generations.create(promptOnly), await client.generations.create(withKeyframes)];

  let sawDreaming = false;
  const completed: Generation[] = [];
  for (const generation of created) {
    if (!generation.id) throw new Error('a created generation has no id');
    completed.push(
      await pollUntilDone(client, generation.id, 90_000, (state) => {
        if (state !== 'dreaming' || sawDreaming) return;
        sawDreaming = true;
        onDreaming();
      }),
    );
  }

  const listed = await client.generations.list({ limit: 10, offset: 0 });
  const doomed = completed[1].id!;
  await client.generations.delete(doomed);
  let deletedThenMissing = false;
  try {
    await client.generations.get(doomed);
  } catch (err) {
    deletedThenMissing = err instanceof NotFoundError;
  }

  const pong = (await client.ping.check()).message;
  const creditsAfter = (await client.credits.get()).credit_balance;
  let unsupported = '';
  try {
    await client.generations.image.create({ model: 'photon-1', prompt: 'a cat' });
  } catch (err) {
    unsupported = err instanceof NotFoundError ? err.message : `unexpected: ${String(err)}`;
  }
  return { created, sawDreaming, completed, listed, deletedThenMissing, pong, credits: [creditsBefore, creditsAfter], unsupported };
}
