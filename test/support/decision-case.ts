/**
 * One case of test/fixtures/decisions.json, the requests and answers the Node app, the Worker in
 * workerd and the Lambda handler are each held to byte for byte.
 */
export interface DecisionCase {
  name: string;
  policy: unknown;
  /** `bodyBase64`, where given, is the body's bytes (not UTF-8 text). */
  request: {
    method: string;
    path: string;
    headers: Record<string, string>;
    body: string;
    bodyBase64?: string;
  };
  expected: {
    status: number;
    contentType: string | null;
    body: string;
    policy: string;
    error: string | null;
  };
}
