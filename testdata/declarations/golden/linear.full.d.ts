declare const linear: {
  /** Creates a new Linear issue with specified details. Use this to create tickets for tasks, bugs, or feature requests. Returns the created issue's identifier and URL. Required fields are title and teamId, with optional description, priority (0-4, where 0 is no priority and 1 is urgent), and status. */
  linear_create_issue(params: {
    /** Issue title */
    title: string;
    /** Team ID */
    teamId: string;
    /** Issue description */
    description?: string;
    /** Priority (0-4) */
    priority?: number;
    /** Issue status */
    status?: string;
  }): Promise<unknown>;
  /** Searches Linear issues using flexible criteria. Supports filtering by any combination of: title/description text, team, status, assignee, labels, priority (1=urgent, 2=high, 3=normal, 4=low), and estimate. Returns up to 10 issues by default (configurable via limit). */
  linear_search_issues(params?: {
    /** Optional text to search in title and description */
    query?: string;
    /** Filter by team ID */
    teamId?: string;
    /** Filter by status name (e.g., 'In Progress', 'Done') */
    status?: string;
    /** Filter by assignee's user ID */
    assigneeId?: string;
    /** Filter by label names */
    labels?: string[];
    /** Filter by priority (1=urgent, 2=high, 3=normal, 4=low) */
    priority?: number;
    /** Filter by estimate points */
    estimate?: number;
    /** Include archived issues in results (default: false) */
    includeArchived?: boolean;
    /** Max results to return (default: 10) */
    limit?: number;
  }): Promise<unknown>;
};
