import { readsAsContentRefusal, refusesContent, VENDORS } from '../../src/vendors/registry.js';

/**
 * Each vendor's content refusals as its adapters word them (a failed task's reason, or a refused request's
 * words), from the vendor's documented answers, beside a failure of its own that must fail over even without
 * RELAY_FAILOVER_ON_CONTENT. One case per vendor at least: a vendor added without its cases fails here.
 */
const CASES: Record<string, { refusals: string[]; ownFailures: string[] }> = {
  kling: {
    refusals: ['Failure to pass the risk control system', 'Trigger the content security policy of the platform (code 1301)'],
    ownFailures: ['Internal error, please try again (code 5000)', 'image resolution is too low (code 1201)', 'no reason given'],
  },
  luma: {
    refusals: ['400: prompt not allowed because advanced moderation failed', 'The prompt was flagged'],
    ownFailures: ['Job failed', 'the upstream completed without a video'],
  },
  runway: {
    refusals: ['The input text was flagged (SAFETY.INPUT.TEXT)', 'Rejected (INPUT_PREPROCESSING.SAFETY.TEXT)', 'Output rejected (SAFETY.OUTPUT.VIDEO)'],
    ownFailures: ['An unexpected error occurred (INTERNAL.BAD_OUTPUT.CODE01)', 'the upstream task was cancelled'],
  },
  minimax: {
    refusals: ['content refused: input new_sensitive (code 1026)', 'output new_sensitive (code 1027)'],
    ownFailures: ['invalid params (code 2013)', 'no reason given'],
  },
  seedance: {
    refusals: ['The request failed because the output video may contain sensitive information. (OutputVideoSensitiveContentDetected)', 'The request was refused (InputTextSensitiveContentDetected)'],
    ownFailures: ['The service encountered an unexpected internal error. (InternalServiceError)', 'the upstream task was expired'],
  },
  wan: {
    refusals: ['Output data may contain inappropriate content. (DataInspectionFailed)', 'The input may infringe (IPInfringementSuspect)'],
    ownFailures: ['The task failed (InternalError.Algo)', 'the upstream no longer knows the task (expired or not found)'],
  },
  stability: {
    refusals: [
      "the upstream's moderation refused the request (content_moderation): Your request was flagged by our content moderation system",
      "the result was filtered by the upstream's moderation (finish-reason CONTENT_FILTERED)",
      "the song was filtered by the upstream's moderation (finish-reason CONTENT_FILTERED)",
    ],
    ownFailures: ['bad_request: width must be a multiple of 64', 'the upstream answered without an image', 'the upstream answered without audio', 'bad_request: audio: must last 6 to 190 seconds, not 4.00', 'Stable Audio takes no style to avoid'],
  },
  bfl: {
    refusals: ['Content Moderated (Moderation Reasons: Derivative Works Filter)', 'Request Moderated'],
    ownFailures: ['the task ended in Error', 'the upstream no longer has the task (Task not found)'],
  },
  openai: {
    refusals: [
      "the upstream's safety system refused the request (moderation_blocked): Your request was rejected by the safety system.",
      "the upstream's safety system refused the request (content_policy_violation): Your request was rejected",
    ],
    ownFailures: ["Invalid value: '333x333'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.", 'the upstream answered without an image'],
  },
  gemini: {
    refusals: [
      "the upstream's safety filters blocked the prompt (blockReason PROHIBITED_CONTENT)",
      "the upstream's safety filters refused the image (finishReason IMAGE_SAFETY)",
      "the upstream's safety filters removed the video: Veo could not generate videos because the input image violates Vertex AI's usage guidelines.",
    ],
    ownFailures: ['the upstream answered without an image (finishReason NO_IMAGE)', 'the upstream finished the operation without a video'],
  },
  elevenlabs: {
    refusals: [
      "the upstream's moderation refused the text: Your prompt appears to have violated our Terms of Service. Please try again with a different prompt. (bad_prompt)",
      // Music's refusals of copyrighted material, whose words say only their code
      "the upstream's moderation refused the text: The prompt references copyrighted material. (bad_prompt); it suggests: An upbeat pop song",
      'The composition plan references copyrighted material. (bad_composition_plan)',
    ],
    ownFailures: ['A voice with the voice_id foo was not found. (voice_not_found)', 'the upstream answered without audio: an empty body (audio/mpeg)', 'composition_plan.sections.0.duration_ms: Input should be less than or equal to 120000 (validation_error)'],
  },
  suno: {
    refusals: ['Your lyrics contain inappropriate words', 'The description contains sensitive content'],
    ownFailures: ['generation failed, please retry', 'no reason given'],
  },
  // sunoapi.org's failed states and their words (record-info's errorMessage)
  sunoapi: {
    refusals: ['SENSITIVE_WORD_ERROR: the prompt contains prohibited words', 'The lyrics contain copyrighted material', 'Uploaded audio matches existing work of art', 'The style names an artist name'],
    ownFailures: ['GENERATE_AUDIO_FAILED: generation failed', 'CREATE_TASK_FAILED: internal error', 'no reason given'],
  },
  // Mureka documents no moderation code: its failed_reason's words, which the words every vendor uses read
  mureka: {
    refusals: ['The lyrics contain sensitive content', 'The prompt violates our content policy'],
    ownFailures: ['the task timed out', 'the task was cancelled', 'The server had an error while processing your request'],
  },
  gateway: {
    refusals: ["the upstream refused the task: the upstream's safety system refused the request (moderation_blocked)", 'the upstream failed the generation: The prompt was flagged'],
    ownFailures: ["the gateway could not reach an upstream for this task; its credits were given back and it may be submitted again (the gateway's operators see why under the task's id)"],
  },
};

describe('content refusals, by each vendor\'s descriptor', () => {
  it('every vendor has its cases here', () => {
    expect(Object.keys(CASES).sort()).toEqual(VENDORS.map((v) => v.protocol).sort());
  });

  for (const [protocol, { refusals, ownFailures }] of Object.entries(CASES)) {
    it(`${protocol}: its moderation's refusals are content refusals; its own failures are not`, () => {
      for (const words of refusals) expect([words, refusesContent(protocol, words)]).toEqual([words, true]);
      for (const words of ownFailures) expect([words, refusesContent(protocol, words)]).toEqual([words, false]);
    });
  }

  it("reads a stored task's reason as a content refusal when some vendor's refusal reads so (OpenAI's door: moderation_blocked)", () => {
    expect(readsAsContentRefusal("the upstream refused the task: the upstream's safety system refused the request (moderation_blocked): no")).toBe(true);
    expect(readsAsContentRefusal('the upstream failed the task: Content Moderated')).toBe(true);
    expect(readsAsContentRefusal("the image vendor refused the gateway's credentials, so its channel was disabled")).toBe(false);
  });

  it('a protocol no vendor declares is read by the words every vendor uses', () => {
    expect(refusesContent('elsewhere', 'flagged by moderation')).toBe(true);
    expect(refusesContent('elsewhere', 'Internal error')).toBe(false);
  });
});
