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
    // A VPC endpoint's hosts, regional and zonal, name the region of the SQS they reach.
    ["https://vpce-0a1b2c3d-4e5f6a7b.sqs.eu-west-1.vpce.amazonaws.com/123456789012/jobs", "eu-west-1"],
    [
      "https://vpce-0a1b2c3d-4e5f6a7b-eu-west-1a.sqs.eu-west-1.vpce.amazonaws.com/123456789012/jobs",
      "eu-west-1",
    ],
    ["https://vpce-0a1b2c3d-4e5f6a7b.sqs.cn-north-1.vpce.amazonaws.com.cn/123456789012/jobs", "cn-north-1"],
    // The legacy global host is us-east-1's.
    ["https://queue.amazonaws.com/123456789012/jobs", "us-east-1"],
    // A port written out is no part of the host.
    ["https://sqs.eu-west-1.amazonaws.com:443/123456789012/jobs", "eu-west-1"],
    // A fully qualified name, its trailing dot written.
    ["https://sqs.eu-west-1.amazonaws.com./123456789012/jobs", "eu-west-1"],
    ["https://queue.amazonaws.com./123456789012/jobs", "us-east-1"],
    // The partitions with a domain of their own: the ISO ones and the European Sovereign Cloud.
    ["https://sqs.us-iso-east-1.c2s.ic.gov/123456789012/jobs", "us-iso-east-1"],
    ["https://sqs.us-isob-east-1.sc2s.sgov.gov/123456789012/jobs", "us-isob-east-1"],
    ["https://sqs.eu-isoe-west-1.cloud.adc-e.uk/123456789012/jobs", "eu-isoe-west-1"],
    ["https://sqs.us-isof-south-1.csp.hci.ic.gov/123456789012/jobs", "us-isof-south-1"],
    ["https://sqs.eusc-de-east-1.amazonaws.eu/123456789012/jobs", "eusc-de-east-1"],
    ["https://vpce-0a1b2c3d.sqs.us-iso-east-1.vpce.c2s.ic.gov/123456789012/jobs", "us-iso-east-1"],
    // Their dual-stack hosts, and China's: sqs.REGION. and the partition's dual-stack domain.
    ["https://sqs.cn-north-1.api.amazonwebservices.com.cn/123456789012/jobs", "cn-north-1"],
    ["https://sqs.eusc-de-east-1.api.amazonwebservices.eu/123456789012/jobs", "eusc-de-east-1"],
    ["https://sqs.us-iso-east-1.api.aws.ic.gov/123456789012/jobs", "us-iso-east-1"],
    ["https://sqs-fips.us-isob-east-1.api.aws.scloud/123456789012/jobs", "us-isob-east-1"],
    ["https://sqs.eu-isoe-west-1.api.cloud-aws.adc-e.uk/123456789012/jobs", "eu-isoe-west-1"],
    ["https://sqs.us-isof-south-1.api.aws.hci.ic.gov/123456789012/jobs", "us-isof-south-1"],
    // A local server, another host: no region named.
    ["https://sqs.us-iso-east-1.c2s.ic.gov.example.test/1/jobs", undefined],
    ["https://sqs.eu-west-1.amazonaws.com../1/jobs", undefined],
    ["https://vpce-0a1b2c3d.sqs.eu-west-1.vpce.amazonaws.com.example.test/1/jobs", undefined],
    ["http://127.0.0.1:9324/000000000000/jobs", undefined],
    ["https://sqs.eu-west-1.amazonaws.com.example.test/1/jobs", undefined],
    ["https://sqs.eu-west-1.api.aws.example.test/1/jobs", undefined],
    ["https://sqs.cn-north-1.api.amazonwebservices.com.cn.example.test/1/jobs", undefined],
    ["not a url", undefined],
  ])("reads %s as %s", (url, region) => {
    expect(queueUrlRegion(url)).toBe(region);
  });
});
