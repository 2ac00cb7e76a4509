/**
 * Writes the GitHub-, Linear- and Sentry-shaped answers of the observed-result-shape corpus
 * (`github.json`, `linear.json`, `sentry.json` beside this file). Their tools are the real
 * `tools/list` entries of `../shared/cases/tools/{github,linear,sentry}.json` (copied into each
 * file); the answers follow the objects of the public API documentation of each service (GitHub
 * REST "Issues" and "Users" and the GraphQL `IssueConnection`, Linear's GraphQL `Issue`, Sentry's
 * "Issues" and "Events" API), as JSON text blocks the way those servers answer, with the variation
 * real answers have: nullable fields (`body`, `milestone`, `assignee`), fields some objects lack
 * (`pull_request`), empty lists, maps keyed by ids or dotted names. Deterministic (a fixed seed).
 *
 *   deno run -A testdata/catalog/results/api_shaped.ts
 */
const OUT = new URL(".", import.meta.url).pathname;
const SHARED = new URL("../../../../shared/cases/tools/", import.meta.url).pathname;

let seed = 23;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const int = (n: number) => Math.floor(rand() * n);
const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[int(16)]).join("");
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
const text = (value: unknown) => ({ content: [{ type: "text", text: JSON.stringify(value, null, 2) }] });

const users = ["octocat", "hubot", "monalisa", "mona-lisa", "defunkt"];
function ghUser(login = pick(users)) {
  const id = 1000 + int(90000);
  return {
    login,
    id,
    node_id: `MDQ6VXNlcj${id}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    html_url: `https://github.com/${login}`,
    type: "User",
    site_admin: false,
  };
}
function ghLabel() {
  const name = pick(["bug", "enhancement", "good first issue", "question", "wontfix"]);
  return { id: 200 + int(9000), node_id: "MDU6TGFiZWwyMDg", name, color: pick(["d73a4a", "a2eeef", "7057ff"]), default: rand() < 0.5, description: rand() < 0.3 ? null : `${name} label` };
}
function ghIssue(n: number, withPr: boolean) {
  const closed = rand() < 0.3;
  return {
    id: 1_000_000 + n,
    node_id: `I_kwDO${n}`,
    number: n,
    title: pick(["Found a bug", "Crash on start", "Docs typo", "Add a flag", "Slow build"]),
    state: closed ? "closed" : "open",
    locked: false,
    user: ghUser(),
    labels: Array.from({ length: int(3) }, ghLabel),
    assignee: rand() < 0.4 ? null : ghUser(),
    assignees: Array.from({ length: int(2) }, () => ghUser()),
    milestone: rand() < 0.5 ? null : { id: 1002604, number: 1, title: "v1.0", state: "open", due_on: rand() < 0.5 ? null : "2027-01-01T00:00:00Z" },
    comments: int(20),
    created_at: "2026-04-22T13:33:48Z",
    updated_at: "2026-05-22T13:33:48Z",
    closed_at: closed ? "2026-06-01T10:00:00Z" : null,
    author_association: pick(["OWNER", "MEMBER", "CONTRIBUTOR", "NONE"]),
    body: rand() < 0.25 ? null : "I'm having a problem with this.",
    reactions: { url: `https://api.github.com/repos/o/r/issues/${n}/reactions`, total_count: int(5), "+1": int(3), "-1": 0, laugh: 0, hooray: 0, confused: 0, heart: int(2), rocket: 0, eyes: 0 },
    ...(withPr ? { pull_request: { url: `https://api.github.com/repos/o/r/pulls/${n}`, html_url: `https://github.com/o/r/pull/${n}`, merged_at: rand() < 0.5 ? null : "2026-06-02T10:00:00Z" } } : {}),
    html_url: `https://github.com/o/r/issues/${n}`,
  };
}

const github = [
  ...Array.from({ length: 10 }, (_, i) => ({
    tool: "list_issues",
    arguments: { owner: "o", repo: "r", perPage: 3 },
    result: text({
      issues: Array.from({ length: i === 3 ? 0 : 1 + int(3) }, (_, j) => ghIssue(1340 + i * 3 + j, rand() < 0.3)),
      pageInfo: { hasNextPage: i < 9, hasPreviousPage: i > 0, startCursor: i === 3 ? null : "Y3Vyc29yOnYyOpHOAAE=", endCursor: i === 3 ? null : "Y3Vyc29yOnYyOpHOAAI=" },
      totalCount: 13,
    }),
  })),
  ...Array.from({ length: 4 }, (_, i) => ({
    tool: "issue_write",
    arguments: { method: i < 2 ? "create" : "update", owner: "o", repo: "r", title: "t" },
    result: text({ id: `${2_000_000 + i}`, url: `https://github.com/o/r/issues/${1400 + i}` }),
  })),
  ...Array.from({ length: 6 }, (_, i) => ({
    tool: "get_me",
    arguments: {},
    result: text({
      ...ghUser(pick(users)),
      name: i % 3 === 1 ? null : "The Octocat",
      company: i % 3 === 2 ? null : "@github",
      blog: "https://github.blog",
      location: i % 3 === 0 ? "San Francisco" : null,
      email: null,
      hireable: null,
      bio: i % 3 === 1 ? "Hello" : null,
      public_repos: 2 + i,
      followers: 20 + i,
      following: 0,
      created_at: "2008-01-14T04:33:35Z",
      plan: { name: "pro", space: 976562499, private_repos: 9999, collaborators: 0 },
    }),
  })),
  ...Array.from({ length: 3 }, (_, i) => ({
    tool: "push_files",
    arguments: { owner: "o", repo: "r", branch: "main", message: "m", files: [] },
    result: text({
      ref: "refs/heads/main",
      node_id: "MDM6UmVmcmVmcy9oZWFkcy9mZWF0dXJlQQ==",
      url: "https://api.github.com/repos/o/r/git/refs/heads/main",
      object: { type: "commit", sha: `aa218f56b14c9653891f9e74264a383fa43fefb${i}`, url: "https://api.github.com/repos/o/r/git/commits/aa2" },
    }),
  })),
  ...Array.from({ length: 3 }, (_, i) => ({
    tool: "set_issue_fields",
    arguments: { owner: "o", repo: "r", issue_number: 1, fields: [] },
    result: text({
      issue_number: 1347 + i,
      fields: Array.from({ length: 1 + i }, (_, j) => ({ field_id: `IFSS_${j}`, name: pick(["Priority", "Effort", "Area"]), value: j === 1 ? 3 : j === 2 ? null : "High" })),
    }),
  })),
  ...Array.from({ length: 3 }, (_, i) => ({
    tool: "projects_write",
    arguments: { method: "update_project_item", owner: "o", project_number: 1 },
    result: text({ id: `PVTI_lADOANN5s84ACbL0zgBVd9${i}`, content: { type: pick(["Issue", "PullRequest"]), number: 10 + i, title: "Ship it", url: "https://github.com/o/r/issues/10" }, fieldValues: i === 0 ? [] : [{ field: "Status", value: "Done" }] }),
  })),
  ...Array.from({ length: 2 }, () => ({
    tool: "ui_get",
    arguments: { method: "labels", owner: "o", repo: "r" },
    result: text({ labels: Array.from({ length: 2 + int(3) }, ghLabel), totalCount: 5 }),
  })),
];

function linearIssue(i: number) {
  return {
    id: uuid(),
    identifier: `ENG-${100 + i}`,
    title: pick(["Fix login", "Speed up sync", "Add export"]),
    description: rand() < 0.3 ? null : "Steps to reproduce…",
    priority: int(5),
    priorityLabel: pick(["No priority", "Urgent", "High", "Medium", "Low"]),
    estimate: rand() < 0.5 ? null : 1 + int(5),
    url: `https://linear.app/acme/issue/ENG-${100 + i}`,
    createdAt: "2026-03-01T10:00:00.000Z",
    updatedAt: "2026-03-02T10:00:00.000Z",
    state: { id: uuid(), name: pick(["Todo", "In Progress", "Done"]), type: pick(["unstarted", "started", "completed"]), color: "#e2e2e2" },
    assignee: rand() < 0.4 ? null : { id: uuid(), name: pick(["Ada", "Grace"]), email: "ada@example.com", displayName: "ada" },
    team: { id: uuid(), key: "ENG", name: "Engineering" },
    labels: { nodes: Array.from({ length: int(3) }, () => ({ id: uuid(), name: pick(["Bug", "Feature"]), color: "#eb5757" })) },
  };
}
const linear = [
  ...Array.from({ length: 8 }, (_, i) => ({
    tool: "linear_create_issue",
    arguments: { title: "t", teamId: "team" },
    result: text({ success: true, issue: linearIssue(i) }),
  })),
  ...Array.from({ length: 10 }, (_, i) => ({
    tool: "linear_search_issues",
    arguments: { query: "login", limit: 5 },
    result: text({
      nodes: Array.from({ length: i === 2 ? 0 : 1 + int(4) }, (_, j) => linearIssue(10 * i + j)),
      pageInfo: { hasNextPage: i % 2 === 0, endCursor: i === 2 ? null : uuid() },
    }),
  })),
];

function sentryIssue(i: number) {
  return {
    id: `${4_500_000_000 + i}`,
    shortId: `PROJ-${i + 10}`,
    title: pick(["TypeError: Cannot read properties of undefined", "ZeroDivisionError: division by zero"]),
    culprit: "app/components/cart.tsx in render",
    permalink: `https://acme.sentry.io/issues/${4_500_000_000 + i}/`,
    level: pick(["error", "warning", "fatal"]),
    status: pick(["unresolved", "resolved", "ignored"]),
    substatus: rand() < 0.3 ? null : "ongoing",
    isPublic: false,
    platform: pick(["javascript", "python"]),
    project: { id: "2", name: "frontend", slug: "frontend" },
    type: "error",
    metadata: { title: "Cannot read properties of undefined", ...(rand() < 0.5 ? { value: "x is undefined", filename: "cart.tsx" } : {}) },
    numComments: int(3),
    assignedTo: rand() < 0.5 ? null : { type: "user", id: "12", name: "Ada", email: "ada@example.com" },
    isBookmarked: false,
    isSubscribed: rand() < 0.5,
    hasSeen: true,
    annotations: [],
    count: `${10 + int(900)}`,
    userCount: int(100),
    firstSeen: "2026-05-01T10:00:00.000000Z",
    lastSeen: "2026-06-01T10:00:00.000000Z",
    stats: { "24h": Array.from({ length: 3 }, (_, h) => [1_780_000_000 + h * 3600, int(10)]) },
  };
}
function sentryEvent(i: number) {
  return {
    id: uuid().replaceAll("-", ""),
    "issue.id": 4_500_000_000 + i,
    title: "TypeError: Cannot read properties of undefined",
    timestamp: "2026-06-01T10:00:00+00:00",
    "event.type": "error",
    message: rand() < 0.3 ? "" : "Cannot read properties of undefined (reading 'id')",
    "user.display": rand() < 0.4 ? null : "ada@example.com",
    environment: pick(["production", "staging"]),
    release: rand() < 0.5 ? null : "frontend@1.2.3",
    "project.name": "frontend",
  };
}
const sentry = [
  ...Array.from({ length: 6 }, (_, i) => ({
    tool: "whoami",
    arguments: {},
    result: text({ id: `${12 + i}`, name: pick(["Ada Lovelace", "Grace Hopper"]), email: "ada@example.com", username: "ada", isActive: true, dateJoined: "2020-01-01T00:00:00.000Z", lastLogin: i % 3 === 2 ? null : "2026-06-01T00:00:00.000Z" }),
  })),
  ...Array.from({ length: 8 }, (_, i) => ({
    tool: "update_issue",
    arguments: { organizationSlug: "acme", issueId: `PROJ-${i}`, status: "resolved" },
    result: text(sentryIssue(i)),
  })),
  ...Array.from({ length: 8 }, (_, i) => ({
    tool: "search_issue_events",
    arguments: { organizationSlug: "acme", issueId: "PROJ-1", query: "environment:production" },
    result: text({
      data: Array.from({ length: i === 1 ? 0 : 1 + int(4) }, (_, j) => sentryEvent(j)),
      meta: {
        fields: { id: "string", "issue.id": "integer", title: "string", timestamp: "date", "event.type": "string", message: "string", "user.display": "string", environment: "string", release: "string", "project.name": "string" },
        units: { id: null, "issue.id": null, timestamp: null },
        isMetricsData: false,
        tips: { query: null, columns: null },
      },
    }),
  })),
  ...Array.from({ length: 3 }, (_, i) => ({
    tool: "get_sentry_resource",
    arguments: { url: `https://acme.sentry.io/issues/${4_500_000_000 + i}/` },
    result: text(sentryIssue(i)),
  })),
  ...Array.from({ length: 3 }, (_, i) => ({
    tool: "search_docs",
    arguments: { query: "source maps", maxResults: 3 },
    result: text({
      query: "source maps",
      results: Array.from({ length: i === 2 ? 0 : 1 + int(3) }, () => ({ id: `platforms/javascript/sourcemaps/${int(9)}`, url: "https://docs.sentry.io/platforms/javascript/sourcemaps/", title: "Source Maps", snippet: "Upload your source maps…", relevance: rand() })),
      ...(i === 1 ? { guide: "javascript/nextjs" } : {}),
    }),
  })),
];

for (const [name, answers, api] of [
  ["github", github, "GitHub REST Issues/Users/Git refs and GraphQL IssueConnection objects"],
  ["linear", linear, "Linear GraphQL Issue, IssueConnection and IssuePayload objects"],
  ["sentry", sentry, "Sentry API Issue, Event (Discover) and User objects"],
] as const) {
  const { tools } = JSON.parse(await Deno.readTextFile(`${SHARED}${name}.json`));
  await Deno.writeTextFile(
    `${OUT}${name}.json`,
    JSON.stringify({ server: name, source: `tools: ../shared/cases/tools/${name}.json; answers: shaped after ${api} (public API docs), by api_shaped.ts`, tools, answers }, null, 1) + "\n",
  );
  console.log(`${name}: ${tools.length} tools, ${answers.length} answers`);
}
