/**
 * The espeak synthesizer in a worker thread (started by pool.ts): `workerData` is the
 * compiled espeak-ng module; each message `{ id, request }` is answered with
 * `{ id, result }` (the PCM buffer transferred, not copied) or `{ id, error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createEspeakSynthesizer } from './espeak.js';
import type { SynthRequest } from '../types.js';
import type { WorkerAnswer } from './pool.js';

const port = parentPort;
if (!port) throw new Error('espeak-worker.ts runs as a worker thread (see pool.ts)');
const synthesizer = createEspeakSynthesizer({ module: workerData as WebAssembly.Module });

port.on('message', (message: { id: number; request: SynthRequest }) => {
  synthesizer
    .then((synth) => synth.synthesize(message.request))
    .then(
      (result) => port.postMessage({ id: message.id, result } satisfies WorkerAnswer, [result.pcm.buffer as ArrayBuffer]),
      (error: unknown) => port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) } satisfies WorkerAnswer),
    );
});
