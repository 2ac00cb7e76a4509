type ScreenInstance = {
  id?: string;
  variantScreenInstance?: ScreenInstance;
};

declare const stitch: {
  create_project(params?: {
    title?: string;
  }): Promise<{
    name?: string;
    screenInstances?: ScreenInstance[];
  }>;
  list_projects(params?: {
    filter?: string;
  }): Promise<{
    projects?: {
      name?: string;
      screenInstances?: ScreenInstance[];
    }[];
  }>;
  create_project_variant(params?: {
    title?: string;
  }): Promise<{
    name?: string;
    screenInstances?: unknown[];
  }>;
};
