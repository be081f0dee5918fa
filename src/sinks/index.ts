/**
 * `rxvoice/sinks`: where streams end. Each sink is an operator that writes, emits
 * progress and a final `done`, and completes only once its output is durable (file
 * fsync'd, closed and renamed; player exited; writable flushed), so
 * `await lastValueFrom(audio$.pipe(toWavFile('out.wav')))` is safe.
 *
 * Writes are sequential: each is awaited before the next. Observables push, so values
 * that arrive while a write is in flight wait in a queue; file sinks write that backlog
 * in one vectored write, so a sink that fell behind catches up. Audio is never kept
 * once written: memory stays flat as long as the source is not faster than the output
 * for long (a live session is not: it runs at synthesis speed).
 *
 * Errors are `SinkError` (`code: 'sink'`, with a `reason`); a source error is passed
 * through unchanged, after the sink cleaned up (temporary file removed, player killed).
 */
export { toWavFile } from './toWavFile.js';
export type { WavFileOptions, WavFileProgress, WavFileWriteProgress, WavFileDone } from './toWavFile.js';
export { toFile } from './toFile.js';
export { stripId3v1, stripId3v2 } from './id3.js';
export type { FileOptions, FileProgress, FileWriteProgress, FileDone, FileSinkInput } from './toFile.js';
export { toAudioDevice } from './toAudioDevice.js';
export type { AudioDeviceOptions, AudioDeviceProgress, AudioDevicePlaying, AudioDeviceDone, AudioDeviceInput } from './toAudioDevice.js';
export { toWritable } from './toWritable.js';
export type { WritableOptions, WritableProgress, WritableWriteProgress, WritableDone, WritableSinkInput } from './toWritable.js';
export { DEFAULT_PLAYERS, findExecutable, findPlayer } from './players.js';
export type { PlayerCandidate, PlayerCommand, PlayerInput } from './players.js';
export { SinkError } from './errors.js';
export { checkWritablePath } from './atomicFile.js';
export type { SinkErrorReason } from './errors.js';
export type { PcmSinkInput } from './inputs.js';
export type { PcmChunk } from '../audio/pcm.js';
