/**
 * Voices in the emulator: `GET /list-voices` and `POST /create-custom-voice`.
 */
import { routes } from '../core/routes.js';
import {
  AUDIO_UPLOAD_EXTENSIONS,
  CreateCustomVoiceFieldsSchema,
  type CreateCustomVoiceResponse,
  type Voice,
} from '../core/schemas.js';
import { compileRoute, formFields, formFile, parseFormBody, sendJson, validate, type CompiledRoute, type Handler } from './http-util.js';
import { resolveLanguage } from './state.js';

const listVoices: Handler = async (ctx) => {
  const answer: Voice[] = [...ctx.state.voices.values()];
  sendJson(ctx.res, 200, answer);
};

/**
 * Multipart fields are strings: `gender` and `age` are read as integers and
 * `enhance_audio` as a boolean (`true`/`false`) before validation. The `file` part must
 * end in .aac, .flac, .mp3 or .wav (else 422 at `['body', 'file']`). Every call makes a
 * new voice (a new id), so the same name with a new sample is a new version.
 */
const createCustomVoice: Handler = async (ctx) => {
  const form = await parseFormBody(ctx.req, await ctx.body());
  const fields = validate(
    CreateCustomVoiceFieldsSchema,
    formFields(form, {
      voice_name: 'string',
      gender: 'int',
      description: 'string',
      age: 'int',
      enhance_audio: 'bool',
      language: 'string',
    }),
  );
  await formFile(form, 'file', AUDIO_UPLOAD_EXTENSIONS);
  const voice = ctx.state.addCustomVoice({
    voice_name: fields.voice_name,
    gender: fields.gender,
    age: fields.age,
    description: fields.description ?? null,
    language: fields.language !== undefined ? resolveLanguage(fields.language) : null,
  });
  const answer: CreateCustomVoiceResponse = { voice_id: voice.id };
  sendJson(ctx.res, 200, answer);
};

/** Routes of the voice endpoints. */
export function voiceRoutes(): Array<CompiledRoute<Handler>> {
  return [
    compileRoute('GET', routes.listVoices, [], listVoices),
    compileRoute('POST', routes.createCustomVoice, [], createCustomVoice),
  ];
}
