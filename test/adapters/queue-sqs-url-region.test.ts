import { describe, expect, it } from "vitest";
import { queueUrlRegion } from "../../src/adapters/queue/sqs.js";

describe("queueUrlRegion", () => {
  it.each([
    ["https://sqs.eu-west-1.amazonaws.com/123456789012/jobs", "eu-west-1"],
    ["https://sqs-fips.us-gov-west-1.amazonaws.com/123456789012/jobs", "us-gov-west-1"],
    ["https://sqs.cn-north-1.amazonaws.com.cn/123456789012/jobs", "cn-north-1"],
    ["https://ap-southeast-2.queue.amazonaws.com/123456789012/jobs", "ap-southeast-2"],
    ["HTTPS://SQS.EU-WEST-1.AMAZONAWS.COM/123456789012/jobs", "eu-west-1"],
    // The dual-stack (IPv6) endpoints.
    ["https://sqs.eu-central-1.api.aws/123456789012/jobs", "eu-central-1"],
    ["https://sqs-fips.us-east-2.api.aws/123456789012/jobs", "us-east-2"],
    // The legacy global host (us-east-1), a local server, another host: no region named.
    ["https://queue.amazonaws.com/123456789012/jobs", undefined],
    ["http://127.0.0.1:9324/000000000000/jobs", undefined],
    ["https://sqs.eu-west-1.amazonaws.com.example.test/1/jobs", undefined],
    ["https://sqs.eu-west-1.api.aws.example.test/1/jobs", undefined],
    ["not a url", undefined],
  ])("reads %s as %s", (url, region) => {
    expect(queueUrlRegion(url)).toBe(region);
  });
});
