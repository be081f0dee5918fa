/**
 * What the emulator keeps of each task-pattern run, per kind (the `data` of its `RunRecord`):
 * written by the creation calls (http-tasks.ts), read by the status and result calls
 * (http-task-results.ts).
 */
export interface SoundRunData {
  prompt: string;
  duration: number;
  audio_type: 'sound' | 'music';
}
export interface SpeechRunData {
  text: string;
  voice_id: number;
  language: string;
}
export interface TranslationRunData {
  texts: string[];
  target_language: string;
}
export interface TranscriptionRunData {
  language: string;
  /** Duration of the uploaded media (a WAV's), so the transcript fits it. */
  durationSeconds: number | undefined;
}
export interface SubtitlesRunData {
  language: string;
  target_language?: string;
  subtitle_format: 'srt' | 'vtt';
}
export interface DubbingRunData {
  video_url: string;
  source_language: string;
  target_languages: string[];
}
export interface ProjectSetupRunData {
  project_name: string | null;
  project_description: string | null;
  created_at: string;
  source_language: string;
  target_languages: string[];
  folder_id: number | null;
}
export interface StoryRunData {
  text: string;
  source_language: string;
  narrator_voice_id?: number;
}
export interface SeparationRunData {
  file_name: string;
  content_type: string;
  bytes: Uint8Array;
}

