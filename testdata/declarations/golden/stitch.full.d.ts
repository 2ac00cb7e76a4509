type ScreenInstance = {
  id?: string;
  variantScreenInstance?: ScreenInstance;
};

declare const stitch: {
  /** Creates a new Stitch project. */
  create_project(params?: {
    title?: string;
  }): Promise<{
    name?: string;
    screenInstances?: ScreenInstance[];
  }>;
  /** Lists projects. */
  list_projects(params?: {
    filter?: string;
  }): Promise<{
    projects?: {
      name?: string;
      screenInstances?: ScreenInstance[];
    }[];
  }>;
  /** create_project with the $defs block missing. */
  create_project_variant(params?: {
    title?: string;
  }): Promise<{
    name?: string;
    screenInstances?: unknown[];
  }>;
};
