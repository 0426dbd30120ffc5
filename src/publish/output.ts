/**
 * Where a command writes its result. The CLI hands it process.stdout; tests collect the
 * bytes in memory, so commands run in-process and nothing depends on a child process.
 */
export interface Output {
  /** Resolves once the chunk may be reused and more may be written (backpressure). */
  write(chunk: string | Uint8Array): Promise<void>;
}

/** A Node stream as an Output: waits for 'drain' when the stream's buffer is full. */
export function streamOutput(stream: NodeJS.WritableStream): Output {
  return {
    write(chunk) {
      if (stream.write(chunk)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const onDrain = (): void => {
          stream.off('error', onError);
          resolve();
        };
        const onError = (e: Error): void => {
          stream.off('drain', onDrain);
          reject(e);
        };
        stream.once('drain', onDrain);
        stream.once('error', onError);
      });
    },
  };
}

/** An Output that keeps everything written (tests, small answers). */
export class MemoryOutput implements Output {
  private readonly chunks: Buffer[] = [];

  async write(chunk: string | Uint8Array): Promise<void> {
    this.chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** The two streams of a command. */
export interface CommandIo {
  readonly stdout: Output;
  readonly stderr: Output;
}

export function processIo(): CommandIo {
  return { stdout: streamOutput(process.stdout), stderr: streamOutput(process.stderr) };
}
