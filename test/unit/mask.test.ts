import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  holdsMasked,
  MASK,
  MAX_SHAPED_STRINGS,
  MAY_HOLD_SECRET,
  maskString,
  maskValue,
  SECRET_SHAPES,
} from "../../src/core/mask.js";

/** Texts maskString masks, each with the secret in it that must not show. */
const MASKED: [string, string][] = [
  ["AKIAIOSFODNN7EXAMPLE", "AKIA"],
  ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_"],
  ["github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_"],
  ["xoxb-1234567890-abcdefghij", "xoxb-"],
  ["sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "sk-ant"],
  ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_"],
  ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJ"],
  // A JWT whose claims' UTF-8 ({"sub":"123","name":"🬓一",…}) spells `-sk-` in base64url: the
  // sk- shape took that run of the payload, and the JWT, no longer whole, showed its signature.
  [
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjMiLCJuYW1lIjoi8J-sk-S4gCIsImlhdCI6MTcwMDAwMDAwMH0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  ],
  ["https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX", "XXXXXXXX"],
  ["curl -H 'Authorization: Bearer abcdef123456789'", "abcdef123456789"],
  ["psql postgres://admin:hunter22@db/prod", "hunter22"],
  ["export API_KEY=supersecretvalue && run", "supersecretvalue"],
  ['DB_PASSWORD="two words"', "two words"],
  ["-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "MIIE"],
  // Spellings the shapes once missed.
  [
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQVYBGXyz0123\n-----END PGP PRIVATE KEY BLOCK-----",
    "lQVYBGXyz0123",
  ],
  ["-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIVngSLri+JkDAbL92\nAwEHoUQDQgAE", "MHcCAQEEIIVngSLri"],
  // A key cut short, then a whole one (the look for an END stops at the next BEGIN).
  [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEcut\n\n-----BEGIN EC PRIVATE KEY-----\nMHcwhole\n-----END EC PRIVATE KEY-----",
    "MHcwhole",
  ],
  [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEcut\n\n-----BEGIN EC PRIVATE KEY-----\nMHcwhole\n-----END EC PRIVATE KEY-----",
    "MIIEcut",
  ],
  // A review: the cut key's base64 run took the next BEGIN line, and what followed a `.` showed.
  [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEcut\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: GnuPG v2.0.22 (GNU/Linux)\n\nlQVYBGXyz0123SECRETBODY\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----",
    "SECRETBODY",
  ],
  [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEcut\n-----BEGIN ENCRYPTED PRIVATE KEY-----\nnote.\nMIIFSECRET\n-----END ENCRYPTED PRIVATE KEY-----",
    "MIIFSECRET",
  ],
  [
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
    "wJalrXUtnFEMI",
  ],
  ['ssh prod "export API_KEY=\\"s3cr3tV4lue-prod-99\\" && run"', "s3cr3tV4lue"],
  ["APP_KEY=base64:q1w2e3r4t5y6u7i8o9p0\nDB_PASS=Tr0ub4dor-and-3", "Tr0ub4dor"],
  ["APP_KEY=base64:q1w2e3r4t5y6u7i8o9p0", "q1w2e3r4t5y6u7i8o9p0"],
  ["REDIS_URL=redis://:r3d1s-pa55word@cache:6379/0", "r3d1s-pa55word"],
  ["psql postgres://admin:p@ssw0rd@db/prod", "ssw0rd"],
  ["environment:\n  POSTGRES_PASSWORD: Tr0ub4dor-and-3\n", "Tr0ub4dor"],
  ['{"user": "svc", "password": "Corr3ct-H0rse"}', "Corr3ct-H0rse"],
  // Found by test/property/mask.test.ts: a header's name spelt with a dash as a JSON key.
  ['requests.get(url, headers={"X-Api-Key": "a1b2c3d4e5f6g7h8"})', "a1b2c3d4e5f6g7h8"],
  ['{"api-key":"a1b2c3d4e5f6g7h8"}', "a1b2c3d4e5f6g7h8"],
  ['{"private-key": "a1b2c3d4e5f6g7h8"}', "a1b2c3d4e5f6g7h8"],
  ["curl -u admin:hunter2hunter2 https://x", "hunter2hunter2"],
  ["curl -H 'PRIVATE-TOKEN: glpat-abcdefghij0123456789' https://gitlab", "abcdefghij0123456789"],
  ["curl -H 'X-Api-Key: 9f8e7d6c5b4a' https://x", "9f8e7d6c5b4a"],
  ["mysql --password=hunter2hunter2 db", "hunter2hunter2"],
  ["stripe sk_live_abcdefghij0123456789", "abcdefghij0123456789"],
  ["npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdef"],
  ["AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIzaSyA"],
  ["https://hooks.slack.com/workflows/T000/A000/123/XXXXXXXXXXXX", "XXXXXXXXXXXX"],
  ["https://discord.com/api/v10/webhooks/123456789/AbCdEfGhIjKlMn", "AbCdEfGhIjKlMn"],
  // A second review of them: a spaced = before a literal, curl across lines, escapes, JSON keys.
  ['db_password = "s3cr3tpass"', "s3cr3tpass"],
  ['const password = "s3cr3tpass";', "s3cr3tpass"],
  ['$env:DB_PASSWORD = "s3cr3tpass"', "s3cr3tpass"],
  // Go's short variable declaration (and Python's walrus) spells the spaced = as :=.
  ['dbPassword := "s3cr3tpass"', "s3cr3tpass"],
  ['if (api_key := "a1b2c3d4e5") != "":', "a1b2c3d4e5"],
  [
    "curl -X POST https://api.example.com/v1/deploy \\\n  -u admin:s3cr3tpass \\\n  -d @body.json",
    "s3cr3tpass",
  ],
  ['export DB_PASSWORD="hunter\\$2024xyz"', "2024xyz"],
  ['{"secretKey": "abcdef1234567890"}', "abcdef1234567890"],
  ["curl -H 'X-ApiKey: 0123456789abcdef0123' https://x", "0123456789abcdef0123"],
  ["curl -H 'Authorization: abcdef1234567890abcdef' https://x", "abcdef1234567890abcdef"],
  // Clients' own password flags, .netrc and lowercase YAML (a review's list of gaps).
  ["mysql -uroot -pS3cretPass db", "S3cretPass"],
  ["docker login -u me -p S3cretPass registry.example", "S3cretPass"],
  ["sshpass -p 'S3cretPass' ssh host", "S3cretPass"],
  ["redis-cli -h cache -a S3cretPass ping", "S3cretPass"],
  // A passphrase quoted with its blanks: the mask stopped at the first blank, and the rest showed.
  ["mysql -uroot -p'correct horse battery' db", "horse battery"],
  ['docker login -u me -p "correct horse battery" registry.example', "horse battery"],
  ["sshpass -p 'correct horse battery' ssh host", "horse battery"],
  ['redis-cli -a "correct horse battery" ping', "horse battery"],
  ["curl -u 'admin:correct horse battery' https://x", "horse battery"],
  ['mysql --password "correct horse battery" db', "horse battery"],
  ["machine api.example login me password S3cretPass", "S3cretPass"],
  ["db:\n  password: S3cretPass\n", "S3cretPass"],
  ["users:\n- name: dev\n  user:\n    token: abcdef0123456789\n", "abcdef0123456789"],
  // What the first version of those shapes let through: a value past a backslash.
  ["export DB_PASSWORD=hunter\\!2024xyz", "2024xyz"],
  ["PASSWORD=pa\\$\\$w0rd-long", "w0rd-long"],
  // Other clients' files and flags, connection strings and signed URLs.
  ["_auth=dXNlcjpTM2NyZXRQYXNzd29yZA==\nemail=me@example.com", "dXNlcjpTM2NyZXRQYXNzd29yZA"],
  ["//registry.example/:_auth=dXNlcjpTM2NyZXRQYXNzd29yZA==", "dXNlcjpTM2NyZXRQYXNzd29yZA"],
  ['{"auths": {"registry.example": {"auth": "dXNlcjpTM2NyZXRQYXNzd29yZA=="}}}', "dXNlcjpTM2NyZXRQYXNzd29yZA"],
  // Written by a CI script's echo, its quotes escaped.
  [
    'echo "{\\"auths\\":{\\"r.example\\":{\\"auth\\":\\"dXNlcjpTM2NyZXRQYXNzd29yZA==\\"}}}" > ~/.docker/config.json',
    "dXNlcjpTM2NyZXRQYXNzd29yZA",
  ],
  ["curl -b 'session=S3cretSess10n' https://x", "S3cretSess10n"],
  ['curl -s --cookie "a=1; sid=S3cretSess10n" https://x', "S3cretSess10n"],
  ["curl -u admin:S3cretPass -b sid=S3cretSess10n https://x", "S3cretSess10n"],
  ["kubectl create secret generic db --from-literal=user=admin --from-literal=dbpw=S3cretPass", "S3cretPass"],
  ["aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENG", "wJalrXUtnFEMIK7MDENG"],
  ["aws configure set prod.aws_session_token IQoJb3JpZ2luX2VjEXAMPLE", "IQoJb3JpZ2luX2VjEXAMPLE"],
  ["Server=db;Database=app;User Id=sa;Pwd=S3cretPass;", "S3cretPass"],
  ["DSN=app;UID=sa;PWD=S3cretPass", "S3cretPass"],
  // The review of these: a value followed by a comma is no Python keyword argument.
  ["DbConfig(user=admin, password=Tr0ub4dor3xyz, host=db)", "Tr0ub4dor3xyz"],
  ["{PATH=/usr/bin, DB_PASSWORD=Tr0ub4dor3xyz, HOME=/root}", "Tr0ub4dor3xyz"],
  [
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abcDEF123+/xyz==;EndpointSuffix=core.windows.net",
    "abcDEF123",
  ],
  ["https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=AbCdEf0123456789%2Bxyz%3D", "AbCdEf0123456789"],
  ["https://b.s3.amazonaws.com/k?X-Amz-Signature=0123456789abcdef0123456789abcdef", "0123456789abcdef"],
  // A hunt of the sinks: Slack's rotating tokens, Hugging Face and SendGrid keys reached Slack.
  ["echo xoxe-1-My0xLTEyMzQ1Njc4OTAtYWJjZGVmZ2hpams", "My0xLTEyMzQ1Njc4OTAt"],
  ["SLACK_CFG=xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtYWJjZGVm", "Mi0yLTEyMzQ1Njc4OTAt"],
  ["echo xoxe.xoxb-1-Mi0yLTEyMzQ1Njc4OTAtYWJjZGVm", "Mi0yLTEyMzQ1Njc4OTAt"],
  ["huggingface-cli login --token hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnop"],
  ["HF=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; echo $HF", "OwAJiecAHjIxfihVLE"],
  [
    "echo SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    "abcdefghijklmnopqrstuvwxyz0123456789",
  ],
  // A .env's `*_KEY` names in capitals (as maskValue reads such a key), INI lines,
  // GitLab's other token prefixes and PyPI tokens.
  ["ENCRYPTION_KEY=9f8e7d6c5b4a39281706\nRAILS_MASTER_KEY=0a1b2c3d4e5f", "9f8e7d6c5b4a"],
  ["ENCRYPTION_KEY=9f8e7d6c5b4a39281706\nRAILS_MASTER_KEY=0a1b2c3d4e5f", "0a1b2c3d4e5f"],
  ['export SIGNING_KEY="Tr0ub4dor and 3"', "Tr0ub4dor"],
  ["ENCRYPTION_KEY_B64=c2VjcmV0IHZhbHVl", "c2VjcmV0IHZhbHVl"],
  ["environment:\n  RAILS_MASTER_KEY: 0a1b2c3d4e5f\n", "0a1b2c3d4e5f"],
  ["[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJDFkMmQ0YTk2\n", "AgEIcHlwaS5vcmc"],
  ["[client]\nuser = root\npassword = Tr0ub4dor3xyz\n", "Tr0ub4dor3xyz"],
  ["spring.datasource.password = Tr0ub4dor3xyz", "Tr0ub4dor3xyz"],
  ["RUNNER_AUTH=glrt-t1_abcdefghij0123456789 gitlab-runner run", "abcdefghij0123456789"],
  ['curl -H "DD-API-KEY: 0123456789abcdef0123456789abcdef" https://api.datadoghq.com', "0123456789abcdef"],
  ["curl -H 'Ocp-Apim-Subscription-Key: 9f8e7d6c5b4a39281706' https://x", "9f8e7d6c5b4a39281706"],
  ["curl -H 'Circle-Token: CCIPAT_abc123def456ghi789' https://x", "abc123def456ghi789"],
  ["<server>\n  <username>deploy</username>\n  <password>S3cr3t-Pass</password>\n</server>", "S3cr3t-Pass"],
  ['<add key="ClearTextPassword" value="S3cr3t Pass" />', "S3cr3t Pass"],
  ['<appSettings><add key="ApiKey" value="0123456789abcdef"/></appSettings>', "0123456789abcdef"],
  ["s3:\n  access_key: AKIAIOSFODNN7EXAMPLE\n  secret_key: wJalrXUtnFEMI/K7MDENG\n", "wJalrXUtnFEMI"],
  ["production:\n  secret_key_base: 9f8e7d6c5b4a39281706\n", "9f8e7d6c5b4a39281706"],
  ["jwt:\n  signing_key: 9f8e7d6c5b4a39281706\n", "9f8e7d6c5b4a39281706"],
  // A YAML line ending in a comment (`#` after a blank), as config files often carry, and a
  // value holding a `#` with no blank before it, which YAML reads as the value's.
  ["db:\n  password: S3cretPass # rotate monthly\n  host: db\n", "S3cretPass"],
  ["users:\n- name: dev\n  user:\n    token: abcdef0123456789  #from the CI\n", "abcdef0123456789"],
  ["environment:\n  RAILS_MASTER_KEY: 0a1b2c3d4e5f # see 1Password\n", "0a1b2c3d4e5f"],
  ["db:\n  password: S3cret#Pass\n", "Pass"],
  ["environment:\n  RAILS_MASTER_KEY: 0a1b2c#3d4e5f\n", "3d4e5f"],
  ["git clone https://u:x@gitlab.example/g.git && echo gldt-abcdefghij0123456789", "abcdefghij0123456789"],
  ["echo glptt-0123456789abcdef0123456789abcdef01234567 | gh variable set T", "0123456789abcdef0123"],
  [
    "twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJDFkMmQ0YTk2LTExMjMtNGEzNC1hYmNkLWVmMDEy dist/*",
    "AgEIcHlwaS5vcmcCJDFkMmQ0YTk2",
  ],
  // Credentials as literals in the code an agent writes: a Python dict's keys in single quotes
  // and a JS object literal's bare names (a spaced `=` and a keyword argument were masked).
  ["headers = {'X-Api-Key': 'a1b2c3d4e5f6g7h8'}", "a1b2c3d4e5f6g7h8"],
  [
    "requests.post(url, json=body, headers={'Authorization': 'a1b2c3d4e5f6g7h8'}, auth={'password': 'hunter2x9'})",
    "hunter2x9",
  ],
  ["{'password': 'hunter2x9'}", "hunter2x9"],
  ["creds = {'api_key': \"a1b2c3d4e5f6g7h8\", 'user': 'bob'}", "a1b2c3d4e5f6g7h8"],
  ["const db = { user: 'app', password: 'a1b2c3d4' };", "a1b2c3d4"],
  ['const client = new Client({\n  apiKey: "a1b2c3d4e5f6g7h8",\n  timeout: 30,\n});', "a1b2c3d4e5f6g7h8"],
  ["auth: { accessToken: 'gho-9f8e7d6c5b4a', clientSecret: \"p@ss-word\" }", "9f8e7d6c5b4a"],
  ["auth: { accessToken: 'gho-9f8e7d6c5b4a', clientSecret: \"p@ss-word\" }", "p@ss-word"],
  // JSON in a double-quoted shell string, its quotes escaped (`curl -d "{\"password\": …}"`),
  // and in a string literal of code: the key's quotes were read only bare.
  ['curl -d "{\\"user\\":\\"admin\\",\\"password\\":\\"hunter2x9\\"}" https://x', "hunter2x9"],
  ['curl -d "{\\"client_secret\\": \\"a1b2c3d4\\", \\"grant_type\\": \\"x\\"}" https://x', "a1b2c3d4"],
  ['json.loads("{\\"api_key\\": \\"a1b2c3d4e5f6\\"}")', "a1b2c3d4e5f6"],
  ['echo "{\\"Authorization\\": \\"a1b2c3d4e5f6g7h8\\"}"', "a1b2c3d4e5f6g7h8"],
];

describe("maskString", () => {
  it.each(MASKED)("masks %j", (text, secret) => {
    const masked = maskString(text);
    expect(masked).toContain(MASK);
    expect(masked).not.toContain(secret);
  });

  it("masks other vendors' prefixed credentials bare, as their documented shapes spell them", () => {
    const alnum = (n: number) => "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z".repeat(8).slice(0, n);
    const hex = (n: number) => "0123456789abcdef".repeat(8).slice(0, n);
    for (const secret of [
      `xai-${alnum(80)}`,
      `gsk_${alnum(52)}`,
      `ya29.a0AfH6SMB${alnum(120)}`,
      `ya29.c.c0ASRK0G${alnum(40)}.${alnum(30)}`,
      `dapi${hex(32)}`,
      `dapi${hex(32)}-2`,
      `dop_v1_${hex(64)}`,
      `doo_v1_${hex(64)}`,
      `dor_v1_${hex(64)}`,
      `lin_api_${alnum(40)}`,
      `sntryu_${hex(64)}`,
      `sntrys_eyJpYXQiOjE2OTQwMzMxNDUuNjQ2MjE2LCJ1cmwiOiJodHRwczovL3NlbnRyeS5pbyJ9_${alnum(43)}`,
      `dp.st.${alnum(43)}`,
      `dp.st.prd.${alnum(43)}`,
      `dp.pt.${alnum(40)}`,
      `dp.sa.${alnum(44)}`,
      `cfut_${alnum(40)}0a1b2c3d`,
      `cfat_${alnum(40)}0a1b2c3d`,
      `cfk_${alnum(40)}0a1b2c3d`,
      `ATATT3xFfGF0${alnum(180)}=1A2B3C4D`,
      `SK${hex(32)}`,
      `key-${hex(32)}`,
      `ntn_12345678901${alnum(35)}`,
      `secret_${alnum(43)}`,
    ])
      for (const text of [secret, `curl -H "X: y" ${secret} -d @body.json`, `{"value": "${secret}"}`])
        expect(maskString(text), text).not.toContain(secret.slice(-12));
  });

  it("leaves what only looks like those prefixes readable", () => {
    for (const text of [
      "git checkout 3f2a9c1d4e5b6a7980f1e2d3c4b5a69788796a5b",
      "kubectl delete pod 123e4567-e89b-12d3-a456-426614174000",
      "cat /home/me/dapi/secret_manager/key-rotation.md",
      "ls ./secret_handling_for_the_production_environment/",
      "redis-cli GET cache-key-d41d8cd98f00b204e9800998ecf8427e",
      "SKU0123456789abcdef0123456789abcdef",
      "pip install xai-sdk groq && grep -r ya29 src/",
      "curl https://dapi.example.com/v1",
      "secret_name = secret_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
      "docker run cfk_exporter; echo dp.st.dev",
      "echo aGVsbG8gd29ybGQgdGhpcyBpcyBhIGxvbmcgYmFzZTY0IHN0cmluZyBmb3IgdGVzdA== | base64 -d",
    ])
      expect(maskString(text)).toBe(text);
  });

  it("leaves ordinary commands alone", () => {
    expect(maskString("git push --force origin main")).toBe("git push --force origin main");
    expect(maskString("npm test -- --token-count 3")).toBe("npm test -- --token-count 3");
    // Prose and counts that only look like credentials.
    for (const text of [
      "git commit -m 'Add basic validation and Token handling middleware'",
      "llm --max-tokens=4096 --temperature 0",
      "MAX_TOKENS=4096 npm run eval",
      "git push -u origin main",
      "echo 'the secret: keep it simple'",
      // Code, uids, headers, JSON and YAML that are no secret.
      "if (token == null) return",
      "token = self.next_token()",
      "api_key = os.environ['API_KEY']",
      "PASSWORD_MIN_LENGTH = 8",
      "docker run -u 1000:1000 img && sudo -u deploy:deploy ls",
      "curl -H 'X-Request-Id: 123' -H 'X-Auth-Method: oauth' -H 'X-Cache-Key: v1' -H 'X-Monkey: banana'",
      "// Cookie: handled by express",
      '{"js-tokens": "^4.0.0", "tokenizer": "gpt2", "password_policy": "strict", "secretName": "prod/db"}',
      '{"csrf_token_header": "X-CSRF-Token"}',
      "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
      "export TOKEN=$(cat ~/.token) && TOKEN=$OTHER run",
      'curl --user "${API_USER}:${API_PASS}" https://x',
      "TOKEN_FILE=/run/secrets/token PASSWORD_MIN_LENGTH=8 TOKENIZERS_PARALLELISM=false make",
      'client = OpenAI(api_key=os.getenv("OPENAI_API_KEY"))',
      'export GH_TOKEN="$(gh auth token)"',
      "limits:\n  TOKEN_LIMIT: 8192\n",
      "mysql -u root -p db && docker login registry.example",
      "interface User {\n  password: string;\n}\nschema:\n  password: string\npermissions:\n  id-token: write\n",
      "schema:\n  password: string # hashed\nssh:\n  private_key: ~/.ssh/id_rsa # deploy key\n",
      "- token: the value the server sent",
      "see the Basic usage/examples section",
      // A cookie jar, Python keyword arguments, the working directory, a word under "auth".
      "curl -b cookies.txt -c cookies.txt https://x",
      "db.connect(user=user, password=password, host=host)",
      "cd $PWD && pwd=$(pwd) && PWD=/home/me ls",
      // The review of these: code that only looks like a connection string or a docker config.
      "pwd = os.getcwd()\nconst pwd = process.cwd();\nif pwd == expected: print(pwd)",
      "connect(user=user, pwd=pwd, host=host) && export PWD=relative/dir",
      '{"auth": "OAuth2ClientCredentials"}',
      '{"auth": "required", "oauth": "none"}',
      // Words that start like a Hugging Face or SendGrid key (the hunt of the sinks).
      "hf_hub_download(repo_id=repo) && hf_transfer && model.hf_config_name",
      "import hf_modeling_utils_for_sequence_classification",
      "SG.config && echo SG.abc.def && xoxe.notes",
      // *_KEY names of data, of where a key is, of a value computed; code spaced
      // around its = (a name, a call, a statement, a comparison, an interpolation).
      "SORT_KEY=created_at PUBLIC_KEY=ssh-ed25519 MY_PRIMARY_KEY=id STRIPE_PUBLISHABLE_KEY=pk_live_x",
      "SIGNING_KEY_ID=abc123 ENCRYPTION_KEY_FILE=/run/k",
      'ENCRYPTION_KEY=$(openssl rand -hex 32) && SIGNING_KEY="$SIGNING_KEY"',
      "const SESSION_KEY: string = load();\nfor k in SOME_KEY: pass\n  QUERY_KEY: [1, 2],",
      "cache_key=f(x) && sort_key=lambda x: x[0]",
      "password = hashed\ntoken = None\npassword = user.password\nlet password = pw1;",
      "if password == abc1:\nmax_tokens = 4096\npassword = %(db_pass)s\npassword = $DB_PASS",
      "gl-runner glob-pattern gldt- and glpat-short",
      "curl -H 'Sort-Key: created' -H 'Accept-Token: none' -H 'DD-API-KEY: $DD_API_KEY' https://x",
      '<password>$PW</password><tokenizer>gpt2</tokenizer><secretName>db</secretName><add key="TokenTtl" value="30"/>',
      "table:\n  primary_key: id\n  sort_key: created_at\n  cache_key: v1\n",
    ])
      expect(maskString(text)).toBe(text);
  });

  it("leaves the lines of source files, CI workflows and Dockerfiles that only look like the new shapes alone", () => {
    // Each was once masked whole, the value an auditor reads to know what ran.
    for (const text of [
      // Python: a count, a constant, an attribute read, spaced as an INI line is.
      "MAX_TOKEN_LEN = 512\ntoken_count = 0\n    self.token_index = -1\nERRORTOKEN = 60\npassword_min = 8",
      "api_key = settings.API_KEY_V2\nx.password = user.password_2",
      // TypeScript: an object literal's members on lines of their own.
      "const KEYS = {\n  SESSION_KEY: SESSION_PREFIX,\n  STRIPE_KEY: process.env.STRIPE_KEY,\n};",
      // A command setting git's configuration by environment: the setting's name, not a key.
      "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='!rm -rf /' git status",
      // Headers and YAML keys of data, as mask.ts keeps `idempotency_key` readable.
      'curl -H "Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324" https://api.stripe.com/v1/charges',
      "curl -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ1=' http://x",
      "with:\n  cache-key: node-modules-20-abc123\n  partition-key: tenant-000123\n  public-key: AAAAC3NzaC1lZDI1NTE5",
      // Where a key is: a path.
      "deploy:\n  private_key: ~/.ssh/id_rsa\n  signing_key: /etc/keys/signing.pem\n  ssh-key: ~/.ssh/id_ed25519_2\n",
      // Python dicts and JS object literals: a reference or an expression, a key of data, a label
      // or a type (a bare name's value needs a digit or a symbol), a call, a GitHub secret.
      "client = OpenAI(api_key=os.environ[\"OPENAI_API_KEY\"])\nopts = {'api_key': settings.API_KEY}",
      "const opts = { apiKey: process.env.OPENAI_API_KEY, password: getPassword('db-1') };",
      "headers = {'Idempotency-Key': 'a1b2c3d4e5f6g7h8', 'cache-key': 'v1-0a1b2c', 'sort_key': 'created_at_2'}",
      "const labels = { password: 'Password', token: \"Token\", apiKey: 'YOUR_API_KEY' };",
      "def login(password: \"Secret\", token: 'str | None' = None): ...",
      `env:\n  password: '\${{ secrets.DB_PASSWORD }}'\n`,
    ])
      expect(maskString(text)).toBe(text);
  });

  it("leaves hookgate's own error codes in a reason alone, and still masks a variable so named", () => {
    // A code with a secret's word in it read as a `NAME: value` line: `JUDGE_NO_API_KEY: [masked] "store"`.
    const codes = [
      ...readFileSync(new URL("../../README.md", import.meta.url), "utf8").matchAll(
        /^\| `([A-Z][A-Z_]+)` \|/gm,
      ),
    ].map((m) => m[1]);
    expect(codes).toContain("JUDGE_NO_API_KEY");
    for (const code of codes) {
      const reason = `hookgate: rule "guard" could not be evaluated (${code}: model "store" has no API key); its onError (deny) applied`;
      expect(maskString(reason)).toBe(reason);
      expect(maskString(`${code}: the hook sent an empty Bearer token`)).toBe(
        `${code}: the hook sent an empty Bearer token`,
      );
    }
    expect(maskString("MY_API_KEY: abc123")).toBe(`MY_API_KEY: ${MASK}`);
    expect(maskString("environment:\n  OPENAI_API_KEY: sk-proj-abc123\n")).not.toContain("abc123");
  });

  it("still masks the secrets next to those look-alikes", () => {
    for (const [text, secret] of [
      ["[client]\npassword = 123456\n", "123456"],
      ["[server]\ntoken = 9f8e7d6c.5b4a3928\n", "9f8e7d6c"],
      ["GIT_CONFIG_KEY_0=http.extraHeader GIT_CONFIG_VALUE_0=x API_KEY_0=9f8e7d6c5b4a", "9f8e7d6c5b4a"],
      ["environment:\n  RAILS_MASTER_KEY: 0a1b2c3d4e5f\n", "0a1b2c3d4e5f"],
      ["curl -H 'Ocp-Apim-Subscription-Key: 9f8e7d6c5b4a39281706' https://x", "9f8e7d6c5b4a39281706"],
      ["s3:\n  secret_key: /AbCd+9f8e7d6c5b4a3928\n", "9f8e7d6c5b4a3928"],
    ] as const) {
      const masked = maskString(text);
      expect(masked, text).toContain(MASK);
      expect(masked, text).not.toContain(secret);
    }
  });

  it("masks JSON whose quotes are escaped up to the value's escaped quote, and no further", () => {
    for (const [text, masked] of [
      [
        'curl -d "{\\"password\\":\\"hunter2x9\\",\\"grant_type\\":\\"password\\"}" https://x',
        `curl -d "{\\"password\\":\\"${MASK}\\",\\"grant_type\\":\\"password\\"}" https://x`,
      ],
      ['"{\\"api-key\\": \\"a1b2c3d4\\"}"', `"{\\"api-key\\": \\"${MASK}\\"}"`],
      // A variable stays, as in bare JSON.
      [`"{\\"token\\": \\"\${TOKEN}\\"}"`, `"{\\"token\\": \\"\${TOKEN}\\"}"`],
    ] as const)
      expect(maskString(text), text).toBe(masked);
  });

  it("masks the secrets a command stores, signs with or logs in with, and leaves its flags and variables", () => {
    // A review of the commands an agent runs: each secret showed.
    for (const [text, masked] of [
      ["gh secret set API_KEY --body S3cr3tValue", `gh secret set API_KEY --body ${MASK}`],
      ["gh secret set API_KEY -b S3cr3tValue --repo o/r", `gh secret set API_KEY -b ${MASK} --repo o/r`],
      ["gh secret set API_KEY -bS3cr3tValue", `gh secret set API_KEY -b${MASK}`],
      [
        'gh secret set API_KEY --env prod --body "correct horse"',
        `gh secret set API_KEY --env prod --body ${MASK}`,
      ],
      ["gh secret set API_KEY <<< 'S3cr3tValue'", `gh secret set API_KEY <<< ${MASK}`],
      // gh reads the value from its stdin when no --body is given.
      ["echo S3cr3tValue | gh secret set API_KEY", `echo ${MASK} | gh secret set API_KEY`],
      [
        "echo -n 'correct horse' | gh secret set API_KEY --repo o/r",
        `echo -n ${MASK} | gh secret set API_KEY --repo o/r`,
      ],
      ["printf '%s' S3cr3tValue | gh secret set API_KEY", `printf '%s' ${MASK} | gh secret set API_KEY`],
      // A login reads the password from its stdin with --password-stdin, as gh does a secret.
      [
        "echo S3cr3tValue | docker login -u me --password-stdin ghcr.io",
        `echo ${MASK} | docker login -u me --password-stdin ghcr.io`,
      ],
      [
        "echo -n 'correct horse' | helm registry login r.example -u me --password-stdin",
        `echo -n ${MASK} | helm registry login r.example -u me --password-stdin`,
      ],
      // And a secret store that reads the value from its stdin.
      [
        "echo -n S3cr3tValue | npx wrangler secret put API_KEY",
        `echo -n ${MASK} | npx wrangler secret put API_KEY`,
      ],
      [
        "echo S3cr3tValue | vercel env add API_KEY production",
        `echo ${MASK} | vercel env add API_KEY production`,
      ],
      // Each package manager's runner, as Cloudflare's and Vercel's docs spell them.
      [
        "echo S3cr3tValue | pnpm wrangler secret put API_KEY",
        `echo ${MASK} | pnpm wrangler secret put API_KEY`,
      ],
      [
        "echo S3cr3tValue | yarn wrangler secret put API_KEY",
        `echo ${MASK} | yarn wrangler secret put API_KEY`,
      ],
      [
        "echo S3cr3tValue | bunx wrangler secret put API_KEY",
        `echo ${MASK} | bunx wrangler secret put API_KEY`,
      ],
      [
        "echo S3cr3tValue | npx vercel env add API_KEY production",
        `echo ${MASK} | npx vercel env add API_KEY production`,
      ],
      [
        "echo -n S3cr3tValue | gcloud secrets versions add db-pass --data-file=-",
        `echo -n ${MASK} | gcloud secrets versions add db-pass --data-file=-`,
      ],
      // printf's format alone, as Secret Manager's quickstart writes it.
      [
        'printf "s3cr3t" | gcloud secrets create my-secret --data-file=-',
        `printf ${MASK} | gcloud secrets create my-secret --data-file=-`,
      ],
      ["printf '%s\\n' \"$PW\" | docker login -u me --password-stdin", ""],
      [
        "docker login -u me --password-stdin <<< 'S3cr3tValue'",
        `docker login -u me --password-stdin <<< ${MASK}`,
      ],
      [
        "aws ssm put-parameter --name /prod/db --type SecureString --value S3cr3tValue",
        `aws ssm put-parameter --name /prod/db --type SecureString --value ${MASK}`,
      ],
      [
        "aws ssm put-parameter \\\n  --name /prod/db \\\n  --value 'S3cr3t Value' \\\n  --type SecureString",
        `aws ssm put-parameter \\\n  --name /prod/db \\\n  --value ${MASK} \\\n  --type SecureString`,
      ],
      [
        "aws secretsmanager create-secret --name prod/db --secret-string S3cr3tValue",
        `aws secretsmanager create-secret --name prod/db --secret-string ${MASK}`,
      ],
      [
        `aws secretsmanager put-secret-value --secret-id prod/db --secret-string '{"user":"app","pw":"S3cr3tValue"}'`,
        `aws secretsmanager put-secret-value --secret-id prod/db --secret-string ${MASK}`,
      ],
      [
        "openssl pkcs12 -export -in c.pem -passout pass:S3cr3tValue -out c.p12",
        `openssl pkcs12 -export -in c.pem -passout pass:${MASK} -out c.p12`,
      ],
      ['openssl rsa -in k.pem -passin "pass:correct horse"', `openssl rsa -in k.pem -passin "pass:${MASK}"`],
      // enc's passphrase (`-k`), raw key (`-K`) and dgst's HMAC key.
      [
        "openssl enc -aes-256-cbc -salt -k S3cr3tValue -in a -out b",
        `openssl enc -aes-256-cbc -salt -k ${MASK} -in a -out b`,
      ],
      ["openssl aes-256-cbc -d -k 'correct horse' -in b", `openssl aes-256-cbc -d -k ${MASK} -in b`],
      [
        "openssl enc -aes-128-cbc -K 00112233445566778899aabbccddeeff -iv 0f0e0d0c0b0a09080706050403020100",
        `openssl enc -aes-128-cbc -K ${MASK} -iv 0f0e0d0c0b0a09080706050403020100`,
      ],
      [
        "echo -n x | openssl dgst -sha256 -hmac S3cr3tValue",
        `echo -n x | openssl dgst -sha256 -hmac ${MASK}`,
      ],
      ["zip -r -P S3cr3tValue out.zip dir", `zip -r -P ${MASK} out.zip dir`],
      ["unzip -P S3cr3tValue out.zip", `unzip -P ${MASK} out.zip`],
      ["7z a -pS3cr3tValue out.7z dir", `7z a -p${MASK} out.7z dir`],
      ["htpasswd -bc .htpasswd admin S3cr3tValue", `htpasswd -bc .htpasswd admin ${MASK}`],
      ["htpasswd -nbB admin S3cr3tValue > .htpasswd", `htpasswd -nbB admin ${MASK} > .htpasswd`],
      ["htpasswd -B -C 12 -b .htpasswd admin S3cr3tValue", `htpasswd -B -C 12 -b .htpasswd admin ${MASK}`],
      [
        "az login --service-principal -u app -p S3cr3tValue --tenant t",
        `az login --service-principal -u app -p ${MASK} --tenant t`,
      ],
      ["docker login -u me -p=S3cr3tValue ghcr.io", `docker login -u me -p=${MASK} ghcr.io`],
      ["docker login -u me -pS3cr3tValue ghcr.io", `docker login -u me -p${MASK} ghcr.io`],
      ["vault login s.AbCdEf0123456789ghij", `vault login ${MASK}`],
      ["vault login -no-print s.AbCdEf0123456789ghij", `vault login -no-print ${MASK}`],
      // A flag's value after a blank, as Go's flag package reads one.
      [
        "vault login -address https://vault:8200 s.AbCdEf0123456789ghij",
        `vault login -address https://vault:8200 ${MASK}`,
      ],
      ["vault login -method token s.AbCdEf0123456789ghij", `vault login -method token ${MASK}`],
      [
        "vault login -tls-skip-verify -namespace ns1 s.AbCdEf0123456789ghij",
        `vault login -tls-skip-verify -namespace ns1 ${MASK}`,
      ],
      ["echo hvs.CAESIJ1abcdefghijklmnopqrstuvw | vault login -", `echo ${MASK} | vault login -`],
      ["VAULT_TOKEN=hvb.AAAAAQJabcdefghijklmnopqrst vault kv get x", `VAULT_TOKEN=${MASK} vault kv get x`],
      [
        "npm config set //registry.npmjs.org/:_authToken S3cr3tValue",
        `npm config set //registry.npmjs.org/:_authToken ${MASK}`,
      ],
      [
        "curl https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage -d chat_id=1",
        `curl https://api.telegram.org/bot${MASK}/sendMessage -d chat_id=1`,
      ],
      [
        'curl -d "{\\"Cookie\\": \\"sid=S3cr3tValue; theme=dark\\"}" https://x',
        `curl -d "{\\"Cookie\\": \\"sid=${MASK}; theme=${MASK}\\"}" https://x`,
      ],
      [
        'curl -H "Authorization: Bearer \\\n  S3cr3tValue0123" https://x',
        `curl -H "Authorization: Bearer \\\n  ${MASK}" https://x`,
      ],
      // Variables, flags alone, help, a file to read the secret from, another command's -p.
      ['gh secret set API_KEY --body "$API_KEY" && gh secret set --help', ""],
      ["gh secret set API_KEY < key.txt && gh secret list", ""],
      ["aws ssm put-parameter --name /ami --type String --value ami-0abc1234", ""],
      ["aws secretsmanager create-secret --name prod/db --secret-string file://secret.json", ""],
      ["openssl rsa -in k.pem -passin env:KEY_PASS -passout file:pw.txt", ""],
      ['zip -r out.zip dir && 7z a -p out.7z dir && htpasswd -nb admin "$PW"', ""],
      ["htpasswd -c .htpasswd admin && docker run -p 8080:80 img", ""],
      ['vault login "$VAULT_TOKEN" && vault login -method=userpass username=me && vault login -', ""],
      [
        "vault login -method userpass username=me && vault login -address https://vault:8200 -method oidc",
        "",
      ],
      ['echo "$TOKEN" | gh secret set API_KEY && cat key.txt | gh secret set API_KEY', ""],
      ['echo "$PW" | docker login -u me --password-stdin && cat pw.txt | docker login --password-stdin', ""],
      ['docker login -u me --password-stdin <<< "$PW" && echo done | tee log', ""],
      ["jq -c . policy.json | npx wrangler secret put HOOKGATE_POLICY && echo hi | wrangler deploy", ""],
      ["echo -n hello | gcloud secrets create db-pass --data-file=secret.txt", ""],
      ["echo -n | gh secret set API_KEY", ""],
      [
        'openssl enc -d -aes-256-cbc -kfile key.txt -in b && openssl enc -k "$PASS" -in a && curl -k https://x',
        "",
      ],
      ['npm config set //registry.npmjs.org/:_authToken "$NPM_TOKEN"', ""],
      ["see https://core.telegram.org/bots/api", ""],
      ["curl -H 'Authorization: Bearer \\\n  $TOKEN' https://x && ARG TOKEN \\\n  --build-arg X", ""],
    ] as const)
      expect(maskString(text), text).toBe(masked || text);
  });

  it("masks a value after a secret's quoted name in capitals as a call's argument or an environment's entry", () => {
    for (const [text, masked] of [
      ["define('DB_PASSWORD', 'S3cretPass99');", `define('DB_PASSWORD', '${MASK}');`],
      [
        "define( 'AUTH_KEY',         'put your unique phrase here' );",
        `define( 'AUTH_KEY',         '${MASK}' );`,
      ],
      ['os.Setenv("API_KEY", "S3cretPass99")', `os.Setenv("API_KEY", "${MASK}")`],
      ['os.environ["OPENAI_API_KEY"] = "S3cretPass99"', `os.environ["OPENAI_API_KEY"] = "${MASK}"`],
      ["ENV['STRIPE_SECRET'] ||= 'S3cretPass99'", `ENV['STRIPE_SECRET'] ||= '${MASK}'`],
      // A list of names, a name of data, a name of where a secret is, code, a variable, nothing.
      ['required = ["API_KEY", "DB_PASSWORD", "HOST"]', ""],
      ["define('DB_NAME', 'wordpress'); define('SORT_KEY', 'x'); define('TOKEN_TTL', '3600');", ""],
      ['os.Setenv("API_KEY", os.Getenv("X")) && os.environ.get("API_KEY", "") && define("SECRET", "$s")', ""],
    ] as const)
      expect(maskString(text), text).toBe(masked || text);
  });

  it("masks the passwords of mongosh's -p, sqlcmd's -P and keytool's -storepass and -keypass, each of them", () => {
    for (const [text, masked] of [
      [
        "mongosh mongodb://db -u admin -p S3cretPass --authenticationDatabase admin",
        `mongosh mongodb://db -u admin -p ${MASK} --authenticationDatabase admin`,
      ],
      ["mongodump -u admin -p 'correct horse' --out /b", `mongodump -u admin -p ${MASK} --out /b`],
      [
        "sqlcmd -S localhost -U sa -P 'Str0ng!Pass' -Q 'SELECT 1'",
        `sqlcmd -S localhost -U sa -P ${MASK} -Q 'SELECT 1'`,
      ],
      [
        "keytool -genkeypair -keystore k.jks -storepass S3cretPass -keypass S3cretKey -dname CN=x",
        `keytool -genkeypair -keystore k.jks -storepass ${MASK} -keypass ${MASK} -dname CN=x`,
      ],
      [
        "keytool -importkeystore -srckeystore a.p12 -srcstorepass S1pass -deststorepass S2pass",
        `keytool -importkeystore -srckeystore a.p12 -srcstorepass ${MASK} -deststorepass ${MASK}`,
      ],
      [
        "jarsigner -keystore k.jks -storepass S3cretPass app.apk key",
        `jarsigner -keystore k.jks -storepass ${MASK} app.apk key`,
      ],
      // -p alone (a prompt), a port, a variable, keytool's other sources, another command's flag.
      ["mongosh -u admin -p --authenticationDatabase admin && docker run -d -p 27017:27017 mongo:7", ""],
      // A container named mongo: docker's -p after it publishes a port, which an auditor reads.
      ["docker run --name mongo -p 27017:27017 -d mongo:7", ""],
      ["podman run --rm --name mongo -e X=1 -p 127.0.0.1:27017:27017/tcp docker.io/library/mongo:7", ""],
      ['sqlcmd -S db -U sa -P "$SA_PASSWORD" && keytool -list -keystore k.jks -storepass:env STOREPASS', ""],
      ["echo -storepass x", ""],
    ] as const)
      expect(maskString(text), text).toBe(masked || text);
  });

  it("masks a password in SQL, PostgreSQL's PASSWORD '…' and MySQL's IDENTIFIED BY '…', and leaves code around the word", () => {
    // An agent creating a database user: the password showed.
    for (const [text, masked] of [
      [
        `psql -c "ALTER USER app WITH PASSWORD 'N3w-Pass!'"`,
        `psql -c "ALTER USER app WITH PASSWORD '${MASK}'"`,
      ],
      [
        "CREATE ROLE app LOGIN ENCRYPTED PASSWORD 'it''s s3cret';",
        `CREATE ROLE app LOGIN ENCRYPTED PASSWORD '${MASK}';`,
      ],
      ["create user app with password 'correct horse';", `create user app with password '${MASK}';`],
      [
        `mysql -e "CREATE USER 'app'@'%' IDENTIFIED BY 'N3w-Pass!'"`,
        `mysql -e "CREATE USER 'app'@'%' IDENTIFIED BY '${MASK}'"`,
      ],
      [
        `ALTER USER root@localhost IDENTIFIED WITH mysql_native_password BY "N3w-Pass!";`,
        `ALTER USER root@localhost IDENTIFIED WITH mysql_native_password BY "${MASK}";`,
      ],
      // Blanks aligning the literal, as many as written.
      [
        `ALTER ROLE app PASSWORD${" ".repeat(40)}'N3w-Pass!';`,
        `ALTER ROLE app PASSWORD${" ".repeat(40)}'${MASK}';`,
      ],
      [
        'CREATE USER app IDENTIFIED \t BY \t\t"N3w-Pass!";',
        `CREATE USER app IDENTIFIED \t BY \t\t"${MASK}";`,
      ],
      // A variable, no literal, and code around the word.
      [`psql -c "ALTER USER app PASSWORD '$PW'" && psql -c "ALTER ROLE app PASSWORD NULL"`, ""],
      ["print('Wrong password ' + name + '!')", ""],
      ['raise ValueError("Invalid password " + repr(x) + " given")', ""],
    ] as const)
      expect(maskString(text), text).toBe(masked || text);
  });

  it("reads back no unbounded run in a shape's lookbehind, which each position given back would read again", () => {
    // The SQL shape's `(?<=BY[ \t]+)`, tried at each blank its `[ \t]+` gave back: `PASSWORD`, 16
    // KiB of blanks and `x` took a quarter of a second to mask, 32 KiB a second.
    const unbounded = SECRET_SHAPES.flatMap(([pattern]) => lookbehinds(pattern.source)).filter((look) =>
      /[+*]/.test(look.replace(/\\[\s\S]|\[(?:\\[\s\S]|[^\]])*\]/g, "")),
    );
    expect(unbounded).toEqual([]);
    expect(maskString(`PASSWORD${" ".repeat(16_384)}x`)).toBe(`PASSWORD${" ".repeat(16_384)}x`);
  });

  it("masks a long flag's credential spaced after a name ending in one, as with its =, and leaves switches", () => {
    // With a `=` the NAME= shapes masked these; spaced, the value showed.
    for (const [text, masked] of [
      [
        "aws rds create-db-instance --db-instance-identifier db1 --master-user-password Hunter2Pass --engine postgres",
        `aws rds create-db-instance --db-instance-identifier db1 --master-user-password ${MASK} --engine postgres`,
      ],
      [
        "az vm create -n vm1 --admin-username azureuser --admin-password 'P@ssw0rd 1234!'",
        `az vm create -n vm1 --admin-username azureuser --admin-password ${MASK}`,
      ],
      [
        "sentry-cli --auth-token sntrys_abc123def456 releases new 1",
        `sentry-cli --auth-token ${MASK} releases new 1`,
      ],
      ["doctl auth init --access-token dop_v1_abc123", `doctl auth init --access-token ${MASK}`],
      ["supabase db push --db-password Tr0ub4dor", `supabase db push --db-password ${MASK}`],
      ["app --client-secret S3cr3tValue --tenant t", `app --client-secret ${MASK} --tenant t`],
      ["gpg --batch --passphrase S3cr3tValue -d f.gpg", `gpg --batch --passphrase ${MASK} -d f.gpg`],
      // Switches, pages' and tokenizers' tokens, flags naming where a secret is, variables.
      ["pg_dump --no-password db && gh auth status --show-token", ""],
      ["gh auth login --with-token < token.txt", ""],
      ["aws s3api list-objects-v2 --bucket b --starting-token eyJNYXJrZXIiOiBudWxsfQ==", ""],
      ['python train.py --eos-token "</s>" --pad-token "<pad>"', ""],
      ["aws rds create-db-instance --manage-master-user-password --engine postgres", ""],
      ["gpg --passphrase-fd 0 && app --token-file t.txt --secret-id db --password-stdin", ""],
      ['app --auth-token "$AUTH_TOKEN" --admin-password $PW', ""],
      // BuildKit's and Swarm's --secret takes where a secret is: it was masked whole.
      ["docker build --secret id=npmrc,src=$HOME/.npmrc -t app .", ""],
      ['docker buildx build --secret "type=env,id=KEY,env=MY_KEY" .', ""],
      ["docker service create --secret source=db_pw,target=pw nginx", ""],
    ] as const)
      expect(maskString(text), text).toBe(masked || text);
  });

  it("masks a header in brackets up to its closing ones, which stay", () => {
    for (const [text, masked] of [
      ["[X-Api-Key: abc123def456ghi789]", `[X-Api-Key: ${MASK}]`],
      ["request (Authorization: a1b2c3d4e5f6g7h8) refused", `request (Authorization: ${MASK}) refused`],
      ["{Circle-Token: 9f8e7d6c5b4a3928}", `{Circle-Token: ${MASK}}`],
      ["headers: [Authorization: 9f8e7d6c5b4a3928]), then", `headers: [Authorization: ${MASK}]), then`],
      ["(Authorization: Bearer abc123def456ghi789)", `(Authorization: Bearer ${MASK})`],
      // A bracket inside the value is the value's: only the closing ones at its end are left.
      ["X-Api-Key: pa55)w0rd(9f8e7d", `X-Api-Key: ${MASK}`],
      // Still not a header of data.
      ["[Idempotency-Key: 8e03978e-40d5-43e8]", "[Idempotency-Key: 8e03978e-40d5-43e8]"],
    ] as const)
      expect(maskString(text), text).toBe(masked);
  });

  it("masks an Authorization value with no scheme or another scheme than Bearer, Basic or Token, quoted too", () => {
    for (const [text, masked] of [
      ["curl -H 'Authorization: a1b2c3d4e5f6g7h8' https://x", `curl -H 'Authorization: ${MASK}' https://x`],
      ["Authorization: ApiKey a1b2c3d4e5f6g7h8", `Authorization: ApiKey ${MASK}`],
      ["Authorization: SSWS 00QCjAl4MlV-WPXM-0123456789", `Authorization: SSWS ${MASK}`],
      ['headers = {"Authorization": "abc123def456ghi789"}', `headers = {"Authorization": "${MASK}"}`],
      ["headers={'Authorization': 'a1b2c3d4e5f6g7h8'}", `headers={'Authorization': '${MASK}'}`],
      ['{"Proxy-Authorization":"ApiKey a1b2c3d4e5f6"}', `{"Proxy-Authorization":"ApiKey ${MASK}"}`],
      // Code and prose: the token is a variable's, or there is none.
      ['{"Authorization": "Bearer " + token}', '{"Authorization": "Bearer " + token}'],
      [
        `{"Authorization": "required", "Authorization": "\${token}"}`,
        `{"Authorization": "required", "Authorization": "\${token}"}`,
      ],
      ["Authorization: required for every endpoint", "Authorization: required for every endpoint"],
      ["Authorization: Bearer <token>", "Authorization: Bearer <token>"],
      // A variable after the scheme is code, as after Bearer's own shape: not masked, nor cut at its brace.
      ["Authorization: Bearer $OPENAI_API_KEY_2", "Authorization: Bearer $OPENAI_API_KEY_2"],
      [`Authorization: ApiKey \${API_KEY_V2}`, `Authorization: ApiKey \${API_KEY_V2}`],
      [
        `{"Authorization": "Bearer \${process.env.TOKEN_2}"}`,
        `{"Authorization": "Bearer \${process.env.TOKEN_2}"}`,
      ],
      [
        "headers={'Authorization': 'Bearer $OPENAI_API_KEY_2'}",
        "headers={'Authorization': 'Bearer $OPENAI_API_KEY_2'}",
      ],
    ] as const)
      expect(maskString(text), text).toBe(masked);
  });

  it("masks a Basic or Bearer credential with no digit in it, and leaves prose after the scheme word", () => {
    for (const [text, masked] of [
      // base64 of `user:pass`, and of `erOeqDd:o` (capitals before its first small letter).
      ["Authorization: Basic dXNlcjpwYXNz", `Authorization: Basic ${MASK}`],
      [
        "curl -H 'authorization: basic ZXJPZXFEZDpv' https://x",
        `curl -H 'authorization: basic ${MASK}' https://x`,
      ],
      ['{"Authorization": "Basic dXNlcjpwYXNz"}', `{"Authorization": "Basic ${MASK}"}`],
      [
        'req.setRequestHeader("Authorization", "Basic dXNlcjpwYXNz")',
        `req.setRequestHeader("Authorization", "Basic ${MASK}")`,
      ],
      ["Authorization: Bearer AbCdEfGhIjKlMnOpQr", `Authorization: Bearer ${MASK}`],
      // Base64 in a word's case, all small or capitalised, of `j8hv:c`, `fWpw:p` and `S:ovKr`.
      ["Authorization: Basic ajhodjpj", `Authorization: Basic ${MASK}`],
      [
        'curl -H "authorization: basic Zldwdzpw" https://x',
        `curl -H "authorization: basic ${MASK}" https://x`,
      ],
      ['{"Authorization": "Basic Uzpvdkty"}', `{"Authorization": "Basic ${MASK}"}`],
      // Words that decode to no `user:password`.
      ["Authorization: Basic Operations", "Authorization: Basic Operations"],
      ["Basic configuration and Basic permissions", "Basic configuration and Basic permissions"],
      // Prose and code: words in a word's case, a path, a placeholder, Java's declaration.
      ["Authorization: Basic auth is used", "Authorization: Basic auth is used"],
      ["Authorization: Basic authentication is required", "Authorization: Basic authentication is required"],
      [
        "Use Basic Authentication or BASIC AUTHENTICATION",
        "Use Basic Authentication or BASIC AUTHENTICATION",
      ],
      [
        "Bearer Tokens expire; see the Basic usage/examples section",
        "Bearer Tokens expire; see the Basic usage/examples section",
      ],
      ["Authorization: Bearer <token>", "Authorization: Bearer <token>"],
      ["Token accessToken = auth.getToken();", "Token accessToken = auth.getToken();"],
    ] as const)
      expect(maskString(text), text).toBe(masked);
  });

  it("masks AWS Signature Version 4's signature, access key id and session token, in a header and a presigned URL", () => {
    const signature = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024";
    const scope = "20130524/us-east-1/s3/aws4_request";
    for (const text of [
      `Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/${scope}, SignedHeaders=host;range;x-amz-date, Signature=${signature}`,
      `{"Authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/${scope}, SignedHeaders=host, Signature=${signature}"}`,
      `curl -H 'Authorization: AWS4-HMAC-SHA256 Credential=minioadmin/${scope},SignedHeaders=host,Signature=${signature}' http://127.0.0.1:9000/b`,
      `https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-SignedHeaders=host&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLE%2Fabc&X-Amz-Signature=${signature}`,
      `https://b.s3.amazonaws.com/k?X-Amz-Signature=${signature}&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLE%2Fabc&X-Amz-Credential=ASIAIOSFODNN7EXAMPLE%2F20130524`,
    ]) {
      const masked = maskString(text);
      for (const secret of [signature.slice(0, 16), "IOSFODNN7EXAMPLE", "minioadmin", "IQoJb3JpZ2luX2Vj"])
        expect(masked, text).not.toContain(secret);
    }
  });

  it("ends a secret's value in a URL's query or fragment at its & or #, and keeps the other parameters", () => {
    const signature = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024";
    for (const [text, masked] of [
      [
        `curl "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLE%2Fabc%3D&X-Amz-Signature=${signature}" -o x`,
        `curl "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${MASK}&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Security-Token=${MASK}&X-Amz-Signature=${MASK}" -o x`,
      ],
      [
        "https://api.example.com/v1/items?token=abc123def&page=2#top",
        `https://api.example.com/v1/items?token=${MASK}&page=2#top`,
      ],
      [
        "/cb#access_token=ya29.a0AfH6SM&token_type=Bearer&expires_in=3600",
        `/cb#access_token=${MASK}&token_type=Bearer&expires_in=3600`,
      ],
      // Shell's \& in an unquoted URL stays with what follows.
      ["curl http://x/a?token=abc123\\&page=2", `curl http://x/a?token=${MASK}\\&page=2`],
      // An empty value masks nothing, nor the parameter after it.
      ["https://x/?token=&page=2", "https://x/?token=&page=2"],
      // Not in a URL, an & may be the value's: to the blank, as before.
      ["export TOKEN=s3cr3t&&make", `export TOKEN=${MASK}`],
      ["cd /srv/app&&API_TOKEN=s3cr3t&&make", `cd /srv/app&&API_TOKEN=${MASK}`],
      ["DB_PASSWORD=p&ssw0rd#1", `DB_PASSWORD=${MASK}`],
      ["Set PASSWORD=abc&def in the .env file?", `Set PASSWORD=${MASK} in the .env file?`],
      // A `)` or `>` that closes a bracket opened before the URL is the link's, not the value's.
      ["[login](https://h/cb?token=abc123)", `[login](https://h/cb?token=${MASK})`],
      ["see <https://h/cb?token=abc123&page=2>.", `see <https://h/cb?token=${MASK}&page=2>.`],
      ["(https://h/cb?x=(1)&pass=abc123) and", `(https://h/cb?x=(1)&pass=${MASK}) and`],
      ["[docs](https://h/x?api-key=k3y(1)z)", `[docs](https://h/x?api-key=${MASK})`],
      // A value a policy secret's scrubbing masked in part is masked whole.
      ["TOKEN=[masked]xyz make", `TOKEN=${MASK} make`],
      // With none opened before it, a `)` is the value's.
      ["https://h/cb?token=abc)123 x", `https://h/cb?token=${MASK} x`],
      // Go's JSON writes `&` as `\u0026`.
      [
        '{"url":"https://h/cb?x=1\\u0026token=abc123\\u0026page=2"}',
        `{"url":"https://h/cb?x=1\\u0026token=${MASK}\\u0026page=2"}`,
      ],
      [
        '{"url":"https://h/login?user=a\\u0026pass=hunter2xyz\\u0026next=/"}',
        `{"url":"https://h/login?user=a\\u0026pass=${MASK}\\u0026next=/"}`,
      ],
    ] as const) {
      expect(maskString(text), text).toBe(masked);
      expect(maskString(masked), masked).toBe(masked);
    }
  });

  it("masks a URL's query or fragment parameter named as a password, a key or a signature, and keeps the others", () => {
    for (const [text, masked] of [
      ["https://h/login?user=a&pwd=hunter2xyz", `https://h/login?user=a&pwd=${MASK}`],
      ["https://h/login?user=a&PWD=hunter2xyz&next=/", `https://h/login?user=a&PWD=${MASK}&next=/`],
      ["https://h/login?pass=hunter2xyz&user=a", `https://h/login?pass=${MASK}&user=a`],
      ["https://h/cb#pass=hunter2xyz&user=a", `https://h/cb#pass=${MASK}&user=a`],
      // Google APIs' key, also one the AIza shape does not read whole.
      [
        "curl 'https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=AIzaSyD-k3y'",
        `curl 'https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=${MASK}'`,
      ],
      // A signature shorter than the sig= shape's 16 characters.
      [
        "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sig=a1b2c3d4&se=2030-01-01",
        `https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sig=${MASK}&se=2030-01-01`,
      ],
      ["https://h/dl?signature=a1b2c3&id=7", `https://h/dl?signature=${MASK}&id=7`],
      ["https://h/v1/x?api-key=hunter2xyz", `https://h/v1/x?api-key=${MASK}`],
      ["https://h/v1/x?X-Api-Key=hunter2xyz&q=1", `https://h/v1/x?X-Api-Key=${MASK}&q=1`],
      [
        "https://apim.example.net/echo?subscription-key=0a1b2c",
        `https://apim.example.net/echo?subscription-key=${MASK}`,
      ],
      [
        "https://p.firebaseio.com/users.json?auth=hunter2xyz&print=pretty",
        `https://p.firebaseio.com/users.json?auth=${MASK}&print=pretty`,
      ],
      // In HTML, the `&` between parameters is written `&amp;`; `;` also separates them.
      [
        '<a href="/maps?q=paris&amp;key=s3cr3tKEY&amp;z=3">map</a>',
        `<a href="/maps?q=paris&amp;key=${MASK}&amp;z=3">map</a>`,
      ],
      [
        '<img src="https://h/i.png?w=1&amp;auth=hunter2xyz&amp;pass=p4ss&amp;sig=a1b2">',
        `<img src="https://h/i.png?w=1&amp;auth=${MASK}&amp;pass=${MASK}&amp;sig=${MASK}">`,
      ],
      ["https://h/x?a=1;api-key=hunter2xyz", `https://h/x?a=1;api-key=${MASK}`],
      // A key named `…_key` (not one naming data), an OAuth code and a session id.
      [
        "https://h/v?license_key=ABCD-1234&stripe_key=xyz&q=1",
        `https://h/v?license_key=${MASK}&stripe_key=${MASK}&q=1`,
      ],
      [
        "https://app.example/cb?code=4/0AX4XfWh&state=af0ifjsldkj",
        `https://app.example/cb?code=${MASK}&state=af0ifjsldkj`,
      ],
      [
        "https://h/a?session=abc123&sessionid=def&session_id=g1&PHPSESSID=h2&jsessionid=i3",
        `https://h/a?session=${MASK}&sessionid=${MASK}&session_id=${MASK}&PHPSESSID=${MASK}&jsessionid=${MASK}`,
      ],
      // The names the NAME= shape reads were masked before; they stay so.
      [
        "https://h/login?passwd=hunter2xyz&apikey=k3y&u=a",
        `https://h/login?passwd=${MASK}&apikey=${MASK}&u=a`,
      ],
      [
        "https://h/cb?access_token=a1&id_token=b2&refresh_token=c3&client_secret=d4&state=s",
        `https://h/cb?access_token=${MASK}&id_token=${MASK}&refresh_token=${MASK}&client_secret=${MASK}&state=s`,
      ],
      // Benign parameters, a key that names data, a variable and an empty value stay.
      [
        "https://h/list?page=2&sort=key&keyword=x&monkey=1",
        "https://h/list?page=2&sort=key&keyword=x&monkey=1",
      ],
      ["https://h/o?cache-key=abc1&x-idempotency-key=k1", "https://h/o?cache-key=abc1&x-idempotency-key=k1"],
      ['<a href="/o?a=1&amp;cache-key=abc1">', '<a href="/o?a=1&amp;cache-key=abc1">'],
      ['curl "https://h/v1?key=$GOOGLE_API_KEY"', 'curl "https://h/v1?key=$GOOGLE_API_KEY"'],
      ["https://h/login?pass=&user=a", "https://h/login?pass=&user=a"],
      [
        "https://h/x?zip_code=75001&codec=h264&session_count=2",
        "https://h/x?zip_code=75001&codec=h264&session_count=2",
      ],
      [
        "https://h/o?sort_key=abc1&object_key=a/b&public_key=x",
        "https://h/o?sort_key=abc1&object_key=a/b&public_key=x",
      ],
      // Not in a URL's query: no `?` or `#` after a `/`.
      ["cd /srv&&key=abc1 make", "cd /srv&&key=abc1 make"],
    ] as const) {
      expect(maskString(text), text).toBe(masked);
      expect(maskString(masked), masked).toBe(masked);
    }
  });

  it("masks each cookie's value in a Cookie or Set-Cookie header, bare, quoted or in brackets, and keeps its name", () => {
    for (const [text, masked] of [
      ["Cookie: session=abc123def456; theme=dark", `Cookie: session=${MASK}; theme=${MASK}`],
      [
        'headers = {"Cookie": "session=abcdefghij; csrftoken=Xy"}',
        `headers = {"Cookie": "session=${MASK}; csrftoken=${MASK}"}`,
      ],
      ["{'cookie': 'sid=abcdefghij'}", `{'cookie': 'sid=${MASK}'}`],
      [
        "curl -H 'cookie: _ga_AB12=GS1.1; sid=abcdef' https://x",
        `curl -H 'cookie: _ga_AB12=${MASK}; sid=${MASK}' https://x`,
      ],
      // Set-Cookie's attributes stay, joined cookies too (Expires holds a comma).
      [
        "Set-Cookie: id=a3fWa; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Secure; HttpOnly",
        `Set-Cookie: id=${MASK}; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Secure; HttpOnly`,
      ],
      [
        '{"set-cookie": "a=xyz; Path=/, b=uvw; Max-Age=3600; SameSite=Lax"}',
        `{"set-cookie": "a=${MASK}; Path=/, b=${MASK}; Max-Age=3600; SameSite=Lax"}`,
      ],
      ["(Cookie: sid=abcdef).", `(Cookie: sid=${MASK}).`],
      ["Cookie: abcdef0123456789", `Cookie: ${MASK}`],
      // A value in double quotes (RFC 6265's cookie-value), and the cookies after it.
      ['Cookie: sid="abc123def456"; theme=dark', `Cookie: sid=${MASK}; theme=${MASK}`],
      ['Set-Cookie: sid="abc123def456"; Path=/; HttpOnly', `Set-Cookie: sid=${MASK}; Path=/; HttpOnly`],
      // A quote after `=` that closes a quoted header is the header's.
      ['{"Cookie": "sid=YWJj=", "Accept": "*/*"}', `{"Cookie": "sid=${MASK}", "Accept": "*/*"}`],
      // Prose, a cookie's name, code.
      ["// Cookie: handled by express", "// Cookie: handled by express"],
      ['{"cookie": "sessionid", "Cookie": true}', '{"cookie": "sessionid", "Cookie": true}'],
      [`headers: { Cookie: \`sid=\${sid}\` }`, `headers: { Cookie: \`sid=\${sid}\` }`],
      ["res.setCookie: sid=abc", "res.setCookie: sid=abc"],
    ] as const) {
      expect(maskString(text), text).toBe(masked);
      expect(maskString(masked), masked).toBe(masked);
    }
  });

  it("masks each cookie's value in a list of headers, a header set by a call and document.cookie", () => {
    for (const [text, masked] of [
      // A Python dict of a response's headers, and Node's setHeader with a list or one value.
      [
        "{'set-cookie': ['sid=abc123; Path=/; HttpOnly', 'csrf=xyz; SameSite=Lax']}",
        `{'set-cookie': ['sid=${MASK}; Path=/; HttpOnly', 'csrf=${MASK}; SameSite=Lax']}`,
      ],
      ['{"Cookie": ["sid=abc123"]}', `{"Cookie": ["sid=${MASK}"]}`],
      // A cookie after one a shape before masked (a JWT), or after a value that holds a `]`.
      [
        "{'set-cookie': ['jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl; Path=/', 'sid=abc123']}",
        `{'set-cookie': ['jwt=${MASK}; Path=/', 'sid=${MASK}']}`,
      ],
      ["{'Cookie': ['a=x]y', 'sid=abc123']}", `{'Cookie': ['a=${MASK}', 'sid=${MASK}']}`],
      [
        `res.setHeader('Set-Cookie', ['sid=abc123; Path=/', \`theme=\${theme}\`])`,
        `res.setHeader('Set-Cookie', ['sid=${MASK}; Path=/', \`theme=\${theme}\`])`,
      ],
      [
        'res.setHeader("Set-Cookie", "sid=abc123; Max-Age=60")',
        `res.setHeader("Set-Cookie", "sid=${MASK}; Max-Age=60")`,
      ],
      ['headers.append("Cookie", "sid=abc123")', `headers.append("Cookie", "sid=${MASK}")`],
      // A browser script's cookie, its attributes kept.
      [
        'document.cookie = "sid=abc123; path=/; max-age=3600";',
        `document.cookie = "sid=${MASK}; path=/; max-age=3600";`,
      ],
      ["document.cookie='token=s3cr3t'", `document.cookie='token=${MASK}'`],
      // Code: a variable, a template's placeholder, a name, a list of names.
      [`document.cookie = \`sid=\${sid}; path=/\``, `document.cookie = \`sid=\${sid}; path=/\``],
      ['document.cookie = "sid=" + sid;', 'document.cookie = "sid=" + sid;'],
      ["const c = document.cookie;", "const c = document.cookie;"],
      ['headers.set("Cookie", cookie)', 'headers.set("Cookie", cookie)'],
      [
        'SENSITIVE = ["cookie", "session", "authorization"]',
        'SENSITIVE = ["cookie", "session", "authorization"]',
      ],
    ] as const) {
      expect(maskString(text), text).toBe(masked);
      expect(maskString(masked), masked).toBe(masked);
    }
  });

  it("leaves NAME=a dotted path ending in a secret's name as code, and masks a dotted token", () => {
    for (const text of [
      "api_key=settings.API_KEY",
      "client = OpenAI(api_key=settings.API_KEY, timeout=3)",
      "db.connect(password=user.password, token=self.token_2)",
      "OPENAI_KEY=config.openai_api_key ENCRYPTION_KEY=app.config.SECRET_KEY;",
    ])
      expect(maskString(text), text).toBe(text);
    for (const [text, masked] of [
      ["api_key=sk.a1b2c3d4e5f6g7h8", `api_key=${MASK}`],
      ["DOPPLER_TOKEN=dp.st.dev.AbCdEf0123456789 make", `DOPPLER_TOKEN=${MASK} make`],
      ["MAPBOX_TOKEN=sk.eyJ1IjoiYWJjIiwiYSI6ImNrMTIzIn0.abc123DEF456ghi", `MAPBOX_TOKEN=${MASK}`],
      ["export PGPASSWORD=Summer2024.Secure", `export PGPASSWORD=${MASK}`],
      ["token=self.token.a1b2c3d4", `token=${MASK}`],
    ] as const)
      expect(maskString(text), text).toBe(masked);
  });

  it("reads NAME=a dotted path as code only when its last part is a secret's name, not a password with one in it", () => {
    for (const text of [
      "x(password=cfg.Password, key=os.environ.GITHUB_TOKEN, pwd=db.db_password)",
      "token=cfg.API_KEY_V2)",
    ])
      expect(maskString(text), text).toBe(text);
    for (const [text, masked] of [
      ["PASSWORD=my.password1", `PASSWORD=${MASK}`],
      ["DB_PASS=admin.pass123 psql", `DB_PASS=${MASK} psql`],
      ["api_key=cfg.api_keys", `api_key=${MASK}`],
      ["SECRET=ab.secretive,", `SECRET=${MASK}`],
      ["ENCRYPTION_KEY=app.Key1", `ENCRYPTION_KEY=${MASK}`],
    ] as const)
      expect(maskString(text), text).toBe(masked);
  });

  it("reads a spaced name = a dotted path as code only when it is spelt as code, not an INI file's dotted password", () => {
    for (const text of [
      // Its last part a secret's name, a name in snake_case, capitals or camelCase, or the name itself.
      "password = settings.PASSWORD\ntoken = self.token_2\nsecret = config.secret_key\napi_key = os.environ.get(KEY)",
      "token = tokenizer.eos_token_id\n    token = tokenizer.eos_id2\nprivate_key_alg = Algorithm.RS256",
      "token = tokenizer.eosTokenId2\nlog4j.appender.secretLog = org.apache.log4j.RollingFileAppender",
      "token_alg = jwt.algorithms.ES256K\nsecret_digest = hashes.SHA3_256",
      "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey\npassword1 = form.password1",
    ])
      expect(maskString(text), text).toBe(text);
    for (const [text, masked] of [
      ["[client]\npassword = hunter2.Secure\n", `[client]\npassword = ${MASK}\n`],
      ["api_key = sk.abc123def456", `api_key = ${MASK}`],
      ["password = my.password1\nDB_PASS = admin.pass123", `password = ${MASK}\nDB_PASS = ${MASK}`],
      ["  password = Summer2024.Secure  ", `  password = ${MASK}  `],
      ["token = dp.st.prd.Kq3vX9mTz7LpW2rN8sYb4HcJ6dFg1QeV5uAo0iZx", `token = ${MASK}`],
      ["[vault]\ntoken = s.Ga5jyNq6kNfRMVQk2LY1j9iu", `[vault]\ntoken = ${MASK}`],
      // In capitals too: a name's digits come in one run (`HS256`, `ES256K`), a random run's anywhere.
      ["api_key = sk.ABC123DEF456GHI", `api_key = ${MASK}`],
      ["password = admin.P4SSW0RD", `password = ${MASK}`],
    ] as const)
      expect(maskString(text), text).toBe(masked);
  });

  it("reads a password's dotted value spaced after its = as NAME= does: code only when it reads a secret's name", () => {
    for (const value of ["hello.world_2024", "admin.ADMIN123", "corp.Spring_2024", "prod.db_pass_2024"])
      for (const name of ["password", "DB_PASSWORD", "PGPASSWORD", "db_pass", "db_pwd", "passphrase"]) {
        expect(maskString(`${name}=${value}`)).toBe(`${name}=${MASK}`);
        expect(maskString(`${name} = ${value}`)).toBe(`${name} = ${MASK}`);
      }
    for (const text of [
      "password = self.password",
      "password = settings.DB_PASSWORD_2",
      "passphrase = cfg.key_passphrase_v2",
      "db_pwd = os.environ.get('DB_PWD')",
      "token = os.environ.get('TOKEN_2')",
    ]) {
      expect(maskString(text), text).toBe(text);
      expect(maskString(text.replaceAll(" = ", "=")), text).toBe(text.replaceAll(" = ", "="));
    }
    // A token's or a key's line keeps reading a name spelt as code as code.
    const code = "token = tokenizer.eos_id2\nprivate_key_alg = Algorithm.RS256";
    expect(maskString(code)).toBe(code);
  });
});

describe("maskValue", () => {
  it("masks string values under secret-looking keys and recurses", () => {
    expect(
      maskValue({
        command: "ls",
        headers: { Authorization: "Basic xyz", "x-api-key": "k" },
        password: "p",
        count: 3,
        nested: [{ token: "t" }],
      }),
    ).toEqual({
      command: "ls",
      headers: { Authorization: MASK, "x-api-key": MASK },
      password: MASK,
      count: 3,
      nested: [{ token: MASK }],
    });
  });

  it("masks every value under a secret-looking key, not only strings, but not names or counts of them", () => {
    expect(
      maskValue({
        api_keys: ["d41d8cd98f00b204"],
        credentials: { username: "svc_app", pass: "Tr0ub4dor-and-3" },
        pin_password: 84736251,
        pass: "hunter2",
        secret_name: "prod/db",
        max_tokens: 4096,
        token_type: "bearer",
        tokens: "ghx_abcdefgh12345678",
        token_usage: { input: 5, output: 7 },
        password_min_length: 12,
        userPassword: 123456,
        pin: 1234,
        db_pass: "x1y2z3w4",
      }),
    ).toEqual({
      api_keys: [MASK],
      credentials: { username: MASK, pass: MASK },
      pin_password: MASK,
      pass: MASK,
      secret_name: "prod/db",
      max_tokens: 4096,
      token_type: "bearer",
      tokens: MASK,
      token_usage: { input: 5, output: 7 },
      password_min_length: 12,
      userPassword: MASK,
      pin: MASK,
      db_pass: MASK,
    });
  });

  it("masks a number under a key ending in a secret's name, at any depth, and keeps counts, flags and key names", () => {
    expect(
      maskValue({
        api_key: 123456789012,
        apiKey: 987654321,
        client_secret: 42,
        token: 314159,
        OPENAI_KEY: 271828,
        credentials: { user: "u", pass: "hunter2", pin: 4321 },
        credential_store: { pin: 1234, port: 5432, api_key: 5678 },
        token_usage: { input_tokens: 5, output_tokens: 7 },
        max_tokens: 4096,
        token_count: 12,
        secret_version: 3,
        token_required: true,
        password: null,
      }),
    ).toEqual({
      api_key: MASK,
      apiKey: MASK,
      client_secret: MASK,
      token: MASK,
      OPENAI_KEY: MASK,
      credentials: { user: MASK, pass: MASK, pin: MASK },
      credential_store: { pin: MASK, port: 5432, api_key: MASK },
      token_usage: { input_tokens: 5, output_tokens: 7 },
      max_tokens: 4096,
      token_count: 12,
      secret_version: 3,
      token_required: true,
      password: null,
    });
  });

  it("masks values under the other key names a credential goes by, and not a plain key's", () => {
    // Before, the text shapes read these names, the keys of an object did not.
    expect(
      maskValue({
        access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        accessKey: "wJalrXUtnFEMI/K7MDENG",
        app_key: "a1b2c3",
        signing_key: "s1",
        OPENAI_KEY: "o1",
        auth: "user:pass",
        accessKeyId: "AKIA-is-an-id",
        key: "uploads/2026/report.pdf",
        sort_key: "created_at",
        keyboard: "us",
        OPENAI_KEY_ID: "id",
        // A review: the *_KEY names in either case, and the ones that name data, not a secret.
        openai_key: "o2",
        session_key: "s2",
        SORT_KEY: "created_at",
        PUBLIC_KEY: "ssh-ed25519 AAAA",
        STRIPE_PUBLISHABLE_KEY: "pk_live_x",
        s3_key: "uploads/a.pdf",
      }),
    ).toEqual({
      access_key: MASK,
      accessKey: MASK,
      app_key: MASK,
      signing_key: MASK,
      OPENAI_KEY: MASK,
      auth: MASK,
      accessKeyId: "AKIA-is-an-id",
      key: "uploads/2026/report.pdf",
      sort_key: "created_at",
      keyboard: "us",
      OPENAI_KEY_ID: "id",
      openai_key: MASK,
      session_key: MASK,
      SORT_KEY: "created_at",
      PUBLIC_KEY: "ssh-ed25519 AAAA",
      STRIPE_PUBLISHABLE_KEY: "pk_live_x",
      s3_key: "uploads/a.pdf",
    });
  });

  it("cuts long strings with a visible marker", () => {
    const masked = maskValue("a".repeat(2500)) as string;
    expect(masked).toHaveLength(2000 + "…[500 more characters]".length);
    expect(masked.endsWith("…[500 more characters]")).toBe(true);
  });

  it("never cuts between an emoji's two UTF-16 halves", () => {
    // The emoji's halves at 1999 and 2000: a lone half reached audit lines and Slack as U+FFFD.
    const masked = maskValue(`${"a".repeat(1999)}\u{1F600}${"b".repeat(499)}`) as string;
    expect(masked).toBe(`${"a".repeat(1999)}…[501 more characters]`);
  });

  it("masks only the head that can show of a long string, a shape across the cut included", () => {
    const token = `ghp_${"A1b2".repeat(9)}`;
    const value = `${"a ".repeat(995)}${token} ${"b".repeat(1_000_000)}`;
    const masked = maskValue(value) as string;
    expect(masked.startsWith(`${"a ".repeat(995)}${MASK} b…`)).toBe(true);
    expect(masked).not.toContain("ghp_");
    // The count is of the masked text's characters past the cut, the unread tail's included.
    expect(masked.endsWith(`…[${value.length - token.length + MASK.length - 2000} more characters]`)).toBe(
      true,
    );
  });

  it("does not recurse without bound", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(JSON.stringify(maskValue(deep))).toContain("[too deep]");
  });
});

describe("webhook URLs", () => {
  it("masks the token of a Discord webhook URL", () => {
    const masked = maskString(
      "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz_-0123456789",
    );
    expect(masked).toBe(`https://discord.com/api/webhooks/123456789012345678/${MASK}`);
  });
});

describe("the quick test before the shapes", () => {
  /** Pieces of every shape, cut and mixed, so generated strings come near and into matches. */
  const PIECES = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "sk_live_",
    "npm_",
    "AIza",
    "glpat-",
    "glrt-",
    "pypi-AgE",
    "ENCRYPTION_KEY",
    "SORT_KEY",
    "_KEY_B64",
    "<password>",
    "</password>",
    'key="ApiKey" value="',
    "{'password': '",
    'apiKey: "',
    "'",
    "=",
    " = ",
    "\n",
    "xapp-",
    "password",
    "DB_PASS",
    "POSTGRES_PASSWORD",
    ": ",
    '"',
    "\\",
    "X-Api-Key",
    " -u ",
    "--password ",
    " IDENTIFIED BY '",
    "define('DB_PASSWORD', '",
    "['NONCE_KEY'] = '",
    "mongosh -p ",
    "keytool -storepass ",
    " -keypass ",
    "sqlcmd -P",
    "--master-user-password ",
    "Cookie",
    "'set-cookie': ['",
    "', '",
    'document.cookie = "',
    "mysql -p",
    "docker login -p ",
    "sshpass -p ",
    "redis-cli -a ",
    "machine h login u password ",
    "_auth=",
    '"auth": "',
    "curl -b ",
    " --cookie ",
    "--from-literal=k=",
    "aws configure set aws_secret_access_key ",
    "Pwd=",
    "AccountKey=",
    "?sig=",
    "&X-Amz-Signature=",
    "\n  token: ",
    "\n  signingkey: ",
    "glrt-",
    "hooks.slack.com/workflows/",
    "discord.com/api/v10/webhooks/1/",
    "/u?",
    "&key=",
    ";key=",
    "#pass=",
    "?code=",
    "\\u0026",
    "session=",
    "jsessionid=",
    "license_key=",
    "sort_key=",
    "(",
    ")",
    "<",
    ">",
    "[",
    "]",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "github_pat_",
    "xoxb-",
    "xoxe-",
    "xoxe.xoxp-",
    "hf_",
    "SG.",
    "sk-",
    "whsec_",
    "eyJ",
    ".",
    "hooks.slack.com/services/",
    "discord.com/api/webhooks/123/",
    "Bearer ",
    "basic\t",
    "Basic ",
    "ajhodjpj",
    "TOKEN",
    "API_KEY",
    "=",
    "//user:",
    "@",
    "ABCDEFGHIJKLMNOP0123",
    "abcdefghij_-+/=",
    " ",
    "rm -rf /",
    "gh secret set X",
    " --body ",
    " -b",
    " <<< ",
    "aws ssm put-parameter",
    " --type SecureString",
    " --value ",
    "--secret-string ",
    " -passin pass:",
    "openssl enc",
    " -k ",
    " -hmac ",
    "echo x | ",
    "vault login -address a ",
    "zip -P ",
    "7z a -p",
    "htpasswd -nb u ",
    "az login -p=",
    "vault login ",
    "hvs.",
    "npm config set //r/:_authToken ",
    "api.telegram.org/bot1:",
    '\\"Cookie\\": \\"',
    "Bearer \\\n",
    "xai-",
    "gsk_",
    "ya29.",
    "dapi",
    "dop_v1_",
    "lin_api_",
    "sntrys_eyJ",
    "dp.st.",
    "cfut_",
    "ATATT3",
    "SK0123456789abcdef",
    "key-0123456789abcdef",
    "ntn_",
    "secret_",
  ];
  const text = fc
    .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 6 })), { maxLength: 24 })
    .map((parts) => parts.join(""));

  it("lets through only text no shape matches, so skipping the shapes changes nothing", () => {
    fc.assert(
      fc.property(text, (s) => {
        if (MAY_HOLD_SECRET.test(s)) return;
        // A shape runs only where its gate matches (the URL query's reads every query).
        for (const [shape, , gate] of SECRET_SHAPES) {
          if (gate !== undefined && !gate.test(s)) continue;
          shape.lastIndex = 0;
          expect(shape.test(s), `${shape} on ${JSON.stringify(s)}`).toBe(false);
        }
        expect(maskString(s)).toBe(s);
      }),
      { numRuns: 3000 },
    );
  });

  /** A sample of each shape, masked. */
  const samples = [
    "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
    "AKIAABCDEFGHIJKLMNOP",
    "ghp_abcdefghijklmnopqrstuvwxyz",
    "xoxb-1234567890-abc",
    "xoxe-1-abcdefghij",
    "xoxe.xoxp-1-abcdefghij",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    "sk-abcdefghijklmnopqrstuvwxyz",
    "whsec_abcdefgh12",
    "eyJabcdefghij.abcdefghij.abcdefghij",
    "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
    "curl -H 'Authorization: Bearer abcdefgh12345'",
    "https://user:hunter22@example.com/",
    "export API_KEY=abcdef",
    "ENCRYPTION_KEY=abcdef",
    "  RAILS_MASTER_KEY: abcdef",
    "password = abcdef1",
    "glrt-abcdefghij0123456789",
    "pypi-AgEIcHlwaS5vcmcCJDFkMmQ0YTk2LTExMjMtNGEzNC1hYmNkLWVmMDEy",
    "<password>abc</password>",
    '<add key="Password" value="abc"/>',
    "signingkey: abcdef1",
    "  masterkey: abcdef1",
    "{'password': 'abc'}",
    "{ apiKey: 'abc1' }",
    "https://h/login?user=a&pwd=x",
    "https://h/login?pass=x",
    "https://h/v1?key=x",
    "https://h/v1?q=1&amp;key=x",
    "gh secret set X -b abc",
    "aws ssm put-parameter --type SecureString --value abc",
    "--secret-string abc",
    "--auth-token abc",
    "IDENTIFIED BY 'abc'",
    "PASSWORD 'abc'",
    "define('NONCE_KEY', 'abc')",
    "ENV['API_KEY'] = 'abc'",
    "mongosh -p abc",
    "sqlcmd -P abc",
    "keytool -storepass abc",
    "-passin pass:abc",
    "openssl enc -k abc",
    "echo abc | gh secret set X",
    "echo abc | docker login --password-stdin",
    "echo abc | vercel env add X",
    "--password-stdin <<< abc",
    "vault login -address a abc",
    "zip -P abc",
    "7z a -pabc",
    "htpasswd -nb u abc",
    "vault login abc",
    "hvs.abcdefghijklmnopqrstuvwxyz",
    "npm config set //r/:_authToken abc",
    "api.telegram.org/bot1:abcdefghijklmnopqrstuvwxyz",
    "Bearer \\\n abcdefgh1",
    `xai-${"a".repeat(80)}`,
    `gsk_${"a".repeat(52)}`,
    `ya29.${"a".repeat(20)}`,
    `dapi${"0".repeat(32)}`,
    `dop_v1_${"0".repeat(64)}`,
    `lin_api_${"a".repeat(40)}`,
    `sntryu_${"0".repeat(64)}`,
    `sntrys_eyJ${"a".repeat(32)}`,
    `dp.st.${"a".repeat(40)}`,
    `cfut_${"a".repeat(40)}`,
    `ATATT3${"a".repeat(150)}`,
    `SK${"0".repeat(32)}`,
    `key-${"0".repeat(32)}`,
    `ntn_${"1".repeat(11)}${"a".repeat(35)}`,
    `secret_1${"a".repeat(42)}`,
    "Authorization: Basic ajhodjpj",
    "Cookie: session=abc123def456; theme=dark",
    "{'set-cookie': ['sid=abc123; Path=/; HttpOnly', 'csrf=xyz; SameSite=Lax']}",
    'document.cookie = "sid=abc123; path=/"',
    `Authorization: AWS4-HMAC-SHA256 Credential=a/b, SignedHeaders=host, Signature=${"0".repeat(64)}`,
  ];

  it("still masks what each shape catches", () => {
    for (const sample of samples) expect(maskString(sample), sample).toContain(MASK);
  });

  it("lets through every sample of every shape: each shape has one here or among maskString's", () => {
    const all = [...samples, ...MASKED.map(([text]) => text)];
    const caughtBy = SECRET_SHAPES.map(([shape, , gate]) =>
      all.filter((text) => {
        shape.lastIndex = 0;
        return (gate === undefined || gate.test(text)) && shape.test(text);
      }),
    );
    expect(SECRET_SHAPES.filter((_, i) => caughtBy[i]?.length === 0).map(([shape]) => shape.source)).toEqual(
      [],
    );
    expect(caughtBy.flat().filter((text) => !MAY_HOLD_SECRET.test(text))).toEqual([]);
  });
});

describe("maskValue with the policy's secrets", () => {
  it("scrubs them before cutting, so no prefix of one is left at the cut", () => {
    const secret = "hgk_9f8e7d6c5b4a39281706";
    const text = `${"x".repeat(1990)}${secret}`;
    expect(maskValue(text)).toContain("hgk_9f8e");
    const masked = maskValue({ deep: [text] }, [secret]) as { deep: string[] };
    expect(masked.deep[0]).not.toContain("hgk_");
    expect(masked.deep[0]).toContain(MASK);
  });

  it("reads them across a control character inside, and across nothing else", () => {
    const secret = "hgk_9f8e7d6c5b4a39281706";
    const split = (by: string) => `${secret.slice(0, 8)}${by}${secret.slice(8)}`;
    const masked = maskValue({ a: [`x ${split("\t")} y`, split("\n"), split("\u200b"), split(" ")] }, [
      secret,
    ]);
    // A space is a word apart: an agent spelling a secret apart is no accident masking can catch.
    expect(masked).toEqual({ a: [`x ${MASK} y`, MASK, MASK, split(" ")] });
  });

  // Only a head of a long string is read, and its end may split a secret. Masked, a long secret
  // is a short mask: a text of one over and over fit its cut whole, the split one's start with it,
  // and no marker said the rest was left out.
  it("shows no start of one that the end of the string's read head splits, and marks the cut", () => {
    const secret = `Qm7vX2pL9rT4wZ8kN3${"a".repeat(82)}`;
    for (const text of [`${secret} `.repeat(400), `${"x".repeat(60)}${`${secret} `.repeat(400)}`]) {
      const masked = maskValue(text, [secret]) as string;
      expect(masked).not.toContain("Qm");
      expect(masked).toMatch(/^(?:x{60})?(?:\[masked\] )+.*…\[\d+ more characters\]$/);
    }
  });
});

describe("the private key shape", () => {
  /** The shape before, whose look for an END crossed other keys' BEGIN lines (slow). */
  const BEFORE =
    /-----BEGIN [A-Z ]{0,32}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,8192}?-----END [A-Z ]{0,32}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=:,\s\\-]{0,8192})/g;
  const PIECES = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "-----BEGIN CERTIFICATE-----",
    "-----END RSA PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "-----END PGP PRIVATE KEY BLOCK-----",
    "-----END CERTIFICATE-----",
    "\n",
    "\r\n",
    "MIIE",
    "S",
    ".",
    "(x)",
    '"',
    " ",
    "-----",
    "BEGIN ",
    "=ab",
    "Comment: v2.0 (GNU)",
  ];

  it("masks whatever the shape before masked, stopping at the next key's BEGIN line", () => {
    const found = SECRET_SHAPES.find(([pattern]) => pattern.source.startsWith("-----BEGIN"));
    if (found === undefined) throw new Error("no private key shape");
    const [shape] = found;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }), (parts) => {
        // Each "S" becomes a marker of its own, S0x, S1x…
        let next = 0;
        const text = parts.map((p) => (p === "S" ? `S${next++}x` : p)).join("");
        const before = text.replace(BEFORE, MASK);
        const now = text.replace(shape, MASK);
        for (let i = 0; i < next; i++)
          if (!before.includes(`S${i}x`)) expect(now, text).not.toContain(`S${i}x`);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe("a value of very many strings", () => {
  it("runs the shapes on MAX_SHAPED_STRINGS of them that may hold a secret, and masks the rest whole", () => {
    // Before, 262,144 strings of one `@` took 1.4 s, each running every shape.
    const strings = Array.from({ length: MAX_SHAPED_STRINGS + 2 }, (_, i) => `dev${i}@host`);
    const masked = maskValue({ list: [...strings, "plain text"] }) as { list: string[] };
    expect(masked.list[0]).toBe("dev0@host");
    expect(masked.list[MAX_SHAPED_STRINGS - 1]).toBe(`dev${MAX_SHAPED_STRINGS - 1}@host`);
    expect(masked.list.slice(MAX_SHAPED_STRINGS, MAX_SHAPED_STRINGS + 2)).toEqual([MASK, MASK]);
    // Text that cannot hold a secret is never counted nor masked.
    expect(masked.list.at(-1)).toBe("plain text");
    // Each call has its own count.
    expect(maskValue(["dev@host"])).toEqual(["dev@host"]);
  });
});

describe("maskValue keeps a key named __proto__ as a key", () => {
  it("copies it as an own key, masked like any other, and reads nothing through it", () => {
    const event = JSON.parse(
      '{"tool_input":{"__proto__":{"command":"rm -rf /","password":"hunter2"},"path":"a"},"__proto__":{"token":"t0k3n-value"}}',
    ) as unknown;
    const masked = maskValue(event) as Record<string, Record<string, unknown>>;
    expect(JSON.stringify(masked)).toBe(
      '{"tool_input":{"__proto__":{"command":"rm -rf /","password":"[masked]"},"path":"a"},"__proto__":{"token":"[masked]"}}',
    );
    expect(masked.tool_input?.command).toBeUndefined();
    expect(Object.getPrototypeOf(masked.tool_input)).toBe(Object.prototype);
    expect(masked.token).toBeUndefined();
  });
});

describe("holdsMasked", () => {
  // What replay counts as a recorded event something was taken out of.
  it.each([
    ["a plain event", { tool_input: { command: "ls", n: [1, "two"] } }, false],
    ["a value masked", { tool_input: { token: MASK } }, true],
    ["a key masked", { tool_input: { [`x${MASK}y`]: "v" } }, true],
    ["a masked value in a list", { tool_input: { args: ["a", [`-p${MASK}`]] } }, true],
    ["a string cut", { prompt: "abc…[120 more characters]" }, true],
    ["a part too deep", { a: ["[too deep]"] }, true],
    ["text that only mentions a part too deep", { a: "was [too deep] here" }, false],
  ])("%s: %s", (_what, event, held) => {
    expect(holdsMasked(event)).toBe(held);
  });
});

/** The lookbehinds of a regular expression's source, each whole (`(?<=…)`, `(?<!…)`). */
function lookbehinds(source: string): string[] {
  const found: string[] = [];
  for (let start = source.indexOf("(?<"); start !== -1; start = source.indexOf("(?<", start + 1)) {
    if (source[start + 3] !== "=" && source[start + 3] !== "!") continue;
    // A `(` after an odd run of backslashes is a literal one.
    if ((source.slice(0, start).match(/\\*$/)?.[0].length ?? 0) % 2 === 1) continue;
    let depth = 0;
    let inClass = false;
    for (let i = start; i < source.length; i++) {
      const c = source[i];
      if (c === "\\") i++;
      else if (inClass) inClass = c !== "]";
      else if (c === "[") inClass = true;
      else if (c === "(") depth++;
      else if (c === ")" && --depth === 0) {
        found.push(source.slice(start, i + 1));
        break;
      }
    }
  }
  return found;
}
