import OpenAI, { BadRequestError, NotFoundError, toFile } from 'openai';
import type { Video } from 'openai/resources/videos';

/**
 * What a team's existing OpenAI video code does, written against the official `openai` SDK's own types with
 * no casts: `npm test` type-checks it under `strict`, and test/e2e/openai-videos runs it against the gateway.
 */
export interface OpenAiRun {
  created: Video[];
  sawInProgress: boolean;
  completed: Video[];
  /** A third video, made from an image URL (input_reference.image_url), once completed. */
  linked: Video;
  /** Each completed video's bytes, downloaded with downloadContent. */
  contents: Buffer[];
  thumbnail: Buffer;
  listedIds: string[];
  deletedThenMissing: boolean;
  badRequest: { status: number; message: string; param: string | null | undefined; requestId: string | null | undefined };
  notOffered: string;
}

async function untilDone(client: OpenAI, id: string, deadlineMs: number, onStatus: (status: Video['status']) => void): Promise<Video> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const video = await client.videos.retrieve(id);
    onStatus(video.status);
    if (video.status === 'completed' || video.status === 'failed') return video;
    if (Date.now() > deadline) throw new Error(`video ${id} still ${video.status} after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * `referenceUrl`: an image the third video starts from; `onInProgress`: called when the poll loop first sees a
 * video in_progress (a test lets the image at referenceUrl through then).
 */
export async function runOpenAiVideos(baseURL: string, apiKey: string, referenceImage: Buffer, referenceUrl: string, onInProgress: () => void = () => undefined): Promise<OpenAiRun> {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const first = await client.videos.create({ prompt: 'A calico cat playing a piano on stage', seconds: '4', size: '1280x720' });
  const second = await client.videos.create({
    prompt: 'The boat drifts away',
    seconds: '8',
    size: '720x1280',
    input_reference: await toFile(referenceImage, 'first-frame.png', { type: 'image/png' }),
  });
  const third = await client.videos.create({ prompt: 'The boat, from a link', seconds: '4', size: '1280x720', input_reference: { image_url: referenceUrl } });
  let sawInProgress = false;
  const completed: Video[] = [];
  for (const video of [first, second, third]) {
    completed.push(
      await untilDone(client, video.id, 60_000, (status) => {
        if (status !== 'in_progress' || sawInProgress) return;
        sawInProgress = true;
        onInProgress();
      }),
    );
  }
  const linked = completed.pop()!;
  const contents: Buffer[] = [];
  for (const video of completed) contents.push(Buffer.from(await (await client.videos.downloadContent(video.id)).arrayBuffer()));
  const thumbnail = Buffer.from(await (await client.videos.downloadContent(first.id, { variant: 'thumbnail' })).arrayBuffer());
  const listedIds: string[] = [];
  for await (const video of client.videos.list({ limit: 1 })) listedIds.push(video.id);
  const deleted = await client.videos.delete(first.id);
  let deletedThenMissing = false;
  try {
    await client.videos.retrieve(first.id);
  } catch (err) {
    deletedThenMissing = deleted.deleted && err instanceof NotFoundError;
  }
  let badRequest: OpenAiRun['badRequest'] = { status: 0, message: '', param: undefined, requestId: undefined };
  try {
    // a length no vendor's model makes (the SDK's type lists OpenAI's own: 4, 8, 12)
    await client.videos.create({ prompt: 'x', seconds: '99' as '12' });
  } catch (err) {
    if (err instanceof BadRequestError) badRequest = { status: err.status, message: err.message, param: err.param, requestId: err.requestID };
  }
  let notOffered = '';
  try {
    await client.videos.remix(second.id, { prompt: 'again' });
  } catch (err) {
    if (err instanceof NotFoundError) notOffered = err.message;
  }
  return { created: [first, second], sawInProgress, completed, linked, contents, thumbnail, listedIds, deletedThenMissing, badRequest, notOffered };
}
