declare const linear: {
  linear_create_issue(params: {
    title: string;
    teamId: string;
    description?: string;
    priority?: number;
    status?: string;
  }): Promise<unknown>;
  linear_search_issues(params?: {
    query?: string;
    teamId?: string;
    status?: string;
    assigneeId?: string;
    labels?: string[];
    priority?: number;
    estimate?: number;
    includeArchived?: boolean;
    limit?: number;
  }): Promise<unknown>;
};
