import { bufferReader, sniffAudio } from '../../infra/ffmpeg/media-format.js';
import type { SpeechAudio, SpeechFormat } from './speech-vendor.js';
import { UnusableAnswer } from './vendor.js';

/** What each speech format is when sniffed from its bytes (`pcm` has no header: any whole number of 16-bit samples). */
const SNIFFED: Record<Exclude<SpeechFormat, 'pcm'>, string> = { mp3: 'mp3', opus: 'opus', aac: 'aac', flac: 'flac', wav: 'wav' };

/** The start of a page or a document where samples were asked (HTML, XML, a JSON object or list), after blank space. */
const PAGE = /^[\s\uFEFF]*(<(!doctype|html|\?xml|head|body)\b|\{\s*"|\[\s*[{"])/i;

/**
 * A binary speech answer (OpenAI's, ElevenLabs') read as audio of the format asked, or an UnusableAnswer naming
 * what came instead: an empty body, a JSON or HTML page under 200, audio of another format (for raw PCM, a file
 * of any known format, by its bytes), raw PCM of an odd number of bytes. Its bytes are judged from their first bytes (`sniffAudio`), as every file from outside is.
 */
export async function speechAudioOf(answer: { body: Buffer; headers: Record<string, string | string[] | undefined> }, format: SpeechFormat, sampleRate: number): Promise<SpeechAudio> {
  const { body } = answer;
  const header = answer.headers['content-type'];
  const contentType = Array.isArray(header) ? header[0] : header;
  const type = contentType ? ` (${contentType.split(';')[0].trim()})` : '';
  if (body.length === 0) throw new UnusableAnswer(`the upstream answered without audio: an empty body${type}`);
  if (/^(application\/json|text\/)/i.test(contentType ?? '')) throw new UnusableAnswer(`the upstream answered ${body.length} bytes${type}, not ${format} audio: ${body.toString('utf8', 0, 200)}`);
  if (format === 'pcm') {
    // raw samples have no header to check, so what is checked is what they are not: a file of a known audio
    // format, a page, an odd number of bytes; by their bytes, not their type (a vendor may label samples as
    // its default format's type)
    const sniff = await sniffAudio(bufferReader(body), body.length);
    if (sniff.ok) throw new UnusableAnswer(`the upstream answered ${sniff.format} audio${type} where raw 16-bit PCM was asked`);
    if (PAGE.test(body.toString('latin1', 0, 64))) throw new UnusableAnswer(`the upstream answered ${body.length} bytes${type}, not raw 16-bit PCM: ${body.toString('utf8', 0, 200)}`);
    if (body.length % 2 !== 0) throw new UnusableAnswer(`the upstream answered ${body.length} bytes${type}, not 16-bit PCM (an odd number of bytes)`);
    return { bytes: body, format, sampleRate };
  }
  const sniff = await sniffAudio(bufferReader(body), body.length);
  if (!sniff.ok) throw new UnusableAnswer(`the upstream's answer${type} ${sniff.reason}, not ${format} audio`);
  if (sniff.format !== SNIFFED[format]) throw new UnusableAnswer(`the upstream answered ${sniff.format} audio${type} where ${format} was asked`);
  return { bytes: body, format, sampleRate: sniff.wav?.sampleRate ?? sampleRate };
}
