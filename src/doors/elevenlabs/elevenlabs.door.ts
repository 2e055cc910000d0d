/** ElevenLabs' door's name (its music API under `/elevenlabs`); its tasks are music tasks the Suno-style door renders. */
export const ELEVENLABS_DOOR = 'elevenlabs';
