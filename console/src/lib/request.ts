/**
 * A task's request (GET /tasks/{id}'s `request`: the operation's normalized request in the gateway's own words)
 * as the task page shows it: the fields every operation names alike first (what to make, the model, its shape,
 * a voice, lyrics and style), then whatever else it asked, by name. Nothing here knows an operation or a door:
 * a field is shown by its name in the gateway's vocabulary.
 */
export interface RequestRow {
  label: string;
  value: string;
  /** Long text (a prompt, lyrics): shown as written, line breaks kept. */
  text?: boolean;
}

/** The gateway's fields that say what to make or say, in the order shown. */
const TEXT_FIELDS: [string, string][] = [
  ['prompt', 'Prompt'],
  ['input', 'Text'],
  ['description', 'Description'],
  ['lyrics', 'Lyrics'],
  ['negativePrompt', 'Negative prompt'],
  ['instructions', 'Instructions'],
];
/** What it is made like. */
const PLAIN_FIELDS: [string, string][] = [
  ['model', 'Model'],
  ['mode', 'Mode'],
  ['style', 'Style'],
  ['avoid_style', 'Style to avoid'],
  ['title', 'Title'],
];
/** The shape of what it makes, shown on one line. */
const SHAPE_FIELDS = ['aspectRatio', 'size', 'resolution', 'durationS'] as const;
/** Shown apart: the images (as thumbnails of the task's inputs) and the voice. */
const IMAGE_FIELDS = ['firstFrame', 'lastFrame', 'referenceImages'];

export interface RequestView {
  /** The fields shown first, in order. */
  main: RequestRow[];
  /** Every other field it asked, by its name. */
  other: RequestRow[];
  /** The images it gave by URL or as an earlier generation, which have no thumbnail (uploads do: the task's inputs). */
  linked: RequestRow[];
}

export function requestView(request: Record<string, unknown>): RequestView {
  const seen = new Set<string>();
  const take = (field: string) => {
    seen.add(field);
    return request[field];
  };
  const main: RequestRow[] = [];
  for (const [field, label] of TEXT_FIELDS) {
    const value = take(field);
    if (typeof value === 'string' && value !== '') main.push({ label, value, text: true });
  }
  for (const [field, label] of PLAIN_FIELDS) {
    const value = take(field);
    if (value !== undefined && value !== null && value !== '') main.push({ label, value: show(value) });
  }
  const shape = shapeOf(request);
  SHAPE_FIELDS.forEach((f) => seen.add(f));
  if (shape) main.push({ label: 'Shape', value: shape });
  const voice = take('voice');
  if (voice !== undefined && voice !== null) main.push({ label: 'Voice', value: voiceName(voice) });

  const linked: RequestRow[] = [];
  for (const field of IMAGE_FIELDS) {
    const value = take(field);
    const images = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
    images.forEach((image, i) => {
      const label = images.length > 1 || Array.isArray(value) ? `${words(field)} ${i + 1}` : words(field);
      const link = imageLink(image);
      if (link) linked.push({ label, value: link });
    });
  }

  const other = Object.entries(request)
    .filter(([field, value]) => !seen.has(field) && value !== undefined && value !== null)
    .map(([field, value]) => ({ label: words(field), value: show(value) }));
  return { main, other, linked };
}

/** "16:9 · 1536x1024 · 720p · 5 s", or null when it asked none of them. */
export function shapeOf(request: Record<string, unknown>): string | null {
  const parts = [request.aspectRatio, request.size, request.resolution].filter((v): v is string => typeof v === 'string' && v !== '');
  if (typeof request.durationS === 'number') parts.push(`${request.durationS} s`);
  return parts.length ? parts.join(' · ') : null;
}

function voiceName(voice: unknown): string {
  if (typeof voice === 'string') return voice;
  if (voice && typeof voice === 'object') {
    const v = voice as { name?: unknown; id?: unknown };
    if (typeof v.name === 'string') return v.name;
    if (typeof v.id === 'string') return `voice id ${v.id}`;
  }
  return show(voice);
}

/** Where an image it named lives when it was not uploaded: its URL, or the generation whose frame it is. */
function imageLink(image: unknown): string | null {
  if (!image || typeof image !== 'object') return null;
  const i = image as { url?: unknown; generationId?: unknown; upload?: unknown };
  if (typeof i.url === 'string') return i.url;
  if (typeof i.generationId === 'string') return `the last frame of generation ${i.generationId}`;
  return null;
}

/** `negativePrompt`, `avoid_style` → "negative prompt", "avoid style". */
export function words(field: string): string {
  const spaced = field.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
