// OneModelError: the one error type of the package. Its kinds mirror the engine's closed list
// (engine/include/onemodel/error.h) one to one, so a failure reads the same from C++, the CLI and JS.

export type OneModelErrorKind =
  | 'Malformed'
  | 'InvalidModel'
  | 'Unsupported'
  | 'ExternalData'
  | 'Io'
  | 'UnsupportedOperator'
  | 'ExactModeUnavailable'
  | 'InvalidInput'
  | 'Disposed'
  | 'InvalidArgument'
  | 'Internal'
  | 'GraphBuild'
  | 'Compile'
  | 'DataDependent'
  | 'InPlaceMutation'
  | 'SymbolicShape'
  | 'InvalidUsage'
  | 'UnsupportedOperation';

const KINDS: ReadonlySet<string> = new Set<OneModelErrorKind>([
  'Malformed',
  'InvalidModel',
  'Unsupported',
  'ExternalData',
  'Io',
  'UnsupportedOperator',
  'ExactModeUnavailable',
  'InvalidInput',
  'Disposed',
  'InvalidArgument',
  'Internal',
  'GraphBuild',
  'Compile',
  'DataDependent',
  'InPlaceMutation',
  'SymbolicShape',
  'InvalidUsage',
  'UnsupportedOperation',
]);

export interface OneModelErrorDetails {
  /** Operators involved, as "Type (opset N)"; filled for UnsupportedOperator and ExactModeUnavailable. */
  operators?: readonly string[];
  /** Name of the graph node the error is about. */
  node?: string;
  /** The model source (file path, URL or "<bytes>"). */
  source?: string;
  /** Byte offset in the model file. */
  offset?: number;
  /** Protobuf field path, e.g. "graph.node[3].attribute[0]". */
  fieldPath?: string;
  cause?: unknown;
}

export class OneModelError extends Error {
  readonly kind: OneModelErrorKind;
  /** The message without kind and location (`message` holds the full text). */
  readonly detail: string;
  readonly operators: string[];
  readonly node: string | undefined;
  readonly source: string | undefined;
  readonly offset: number | undefined;
  readonly fieldPath: string | undefined;

  constructor(kind: OneModelErrorKind, detail: string, details: OneModelErrorDetails = {}) {
    // Same text layout as the engine's Error::what(), so logs from every front end look alike.
    const where: string[] = [];
    if (details.source) where.push(`in ${details.source}`);
    if (details.offset !== undefined) where.push(`offset ${details.offset}`);
    if (details.fieldPath) where.push(`field ${details.fieldPath}`);
    if (details.node) where.push(`node '${details.node}'`);
    const text = `${kind}: ${detail}${where.length > 0 ? ` [${where.join(', ')}]` : ''}`;
    super(text, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'OneModelError';
    this.kind = kind;
    this.detail = detail;
    this.operators = [...(details.operators ?? [])];
    this.node = details.node || undefined;
    this.source = details.source || undefined;
    this.offset = details.offset;
    this.fieldPath = details.fieldPath || undefined;
  }
}

/** The plain object the wasm binding throws for an engine error (bindings/embind.cc, error_object). */
interface NativeErrorObject {
  kind: string;
  message: string;
  operators: string[];
  node: string;
  source: string;
  offset: number | null;
  fieldPath: string;
}

function isNativeError(e: unknown): e is NativeErrorObject {
  return (
    typeof e === 'object' &&
    e !== null &&
    !(e instanceof Error) &&
    typeof (e as NativeErrorObject).kind === 'string' &&
    typeof (e as NativeErrorObject).message === 'string'
  );
}

/**
 * Turns whatever a call into wasm threw into a OneModelError. Engine errors arrive as plain objects; anything
 * else (a wasm trap, an exception the binding failed to convert) is a bug of the engine: kind Internal.
 */
export function fromNative(e: unknown): OneModelError {
  if (e instanceof OneModelError) return e;
  if (isNativeError(e)) {
    const kind = (KINDS.has(e.kind) ? e.kind : 'Internal') as OneModelErrorKind;
    return new OneModelError(kind, e.message, {
      operators: Array.isArray(e.operators) ? e.operators : [],
      node: e.node,
      source: e.source,
      offset: typeof e.offset === 'number' ? e.offset : undefined,
      fieldPath: e.fieldPath,
    });
  }
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new OneModelError('Internal', `the engine failed unexpectedly (${text})`, { cause: e });
}
