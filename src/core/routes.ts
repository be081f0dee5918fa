/**
 * Every path of the service, in one table. The client and the emulator both read
 * paths from here, so a path is changed in one place.
 *
 * Paths marked "DESIGN" are the ones the contract leaves open and `shared/DESIGN.md` fixes.
 */
/** DESIGN: the live speech WebSocket's path (a browser bundle of `rxvoice/live` needs only this one). */
export const LIVE_TTS_PATH = '/live-tts/ws';

const seg = (value: string | number): string => encodeURIComponent(String(value));

export const routes = {
  // Sound and music
  textToSound: '/text-to-sound',
  textToSoundStatus: (taskId: string) => `/text-to-sound/${seg(taskId)}`,
  textToSoundResults: '/text-to-sound-results',
  /** DESIGN: single text-to-sound result, audio bytes (WAV). */
  textToSoundResult: (runId: number) => `/text-to-sound-result/${seg(runId)}`,

  // Speech (deprecated task flow)
  tts: '/tts',
  ttsStatus: (taskId: string) => `/tts/${seg(taskId)}`,
  ttsResult: (runId: number) => `/tts-result/${seg(runId)}`,
  fetchTtsResults: '/fetch-tts-results',
  ttsStream: '/tts-stream',
  /** DESIGN: live speech WebSocket. */
  liveTts: LIVE_TTS_PATH,

  // Voices
  createCustomVoice: '/create-custom-voice',
  listVoices: '/list-voices',

  // Audio separation (creation and result: DESIGN)
  audioSeparation: '/audio-separation',
  audioSeparationStatus: (taskId: string) => `/audio-separation/${seg(taskId)}`,
  audioSeparationResult: (runId: number) => `/audio-separation-result/${seg(runId)}`,

  // Stories
  createStory: '/create-story',
  storyStatus: (taskId: string) => `/story/${seg(taskId)}`,
  storyRun: (runId: number) => `/story-run/${seg(runId)}`,
  translatedStoryResult: (runId: number, targetLanguage: string | number) =>
    `/translated-story-result/${seg(runId)}/${seg(targetLanguage)}`,

  // Dubbing project setup (DESIGN)
  projectSetup: '/project-setup',
  projectSetupStatus: (taskId: string) => `/project-setup/${seg(taskId)}`,
  projectSetupResult: (runId: number) => `/project-setup-result/${seg(runId)}`,

  // Translation
  translation: '/translation',
  translationStatus: (taskId: string) => `/translation/${seg(taskId)}`,
  translationResult: (runId: number) => `/translation-result/${seg(runId)}`,
  translationStream: '/translation/stream',

  // Transcription
  transcription: '/transcription',
  transcriptionStatus: (taskId: string) => `/transcription/${seg(taskId)}`,
  transcriptionResult: (runId: number) => `/transcription-result/${seg(runId)}`,

  // Subtitles (shape chosen after the transcription sibling, see schemas.ts)
  sub: '/sub',
  subStatus: (taskId: string) => `/sub/${seg(taskId)}`,
  subResult: (runId: number) => `/sub-result/${seg(runId)}`,

  // End-to-end dubbing
  endToEndDubbing: '/end-to-end-dubbing',
  endToEndDubbingStatus: (taskId: string) => `/end-to-end-dubbing/${seg(taskId)}`,
  dubbedRunInfo: (runId: number) => `/dubbed-run-info/${seg(runId)}`,
} as const;

export type Routes = typeof routes;
