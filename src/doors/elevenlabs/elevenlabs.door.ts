/** ElevenLabs' door's name (its music API under `/elevenlabs`); its tasks are music tasks storing this name, which the Suno-style door renders (the kind's fallback). */
export const ELEVENLABS_DOOR = 'elevenlabs';
