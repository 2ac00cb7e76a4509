declare const memory: {
  create_entities(params: {
    entities: {
      name: string;
      entityType: string;
      observations: string[];
    }[];
  }): Promise<{
    entities: {
      name: string;
      entityType: string;
      observations: string[];
    }[];
  }>;
  delete_entities(params: {
    entityNames: string[];
  }): Promise<{
    success: boolean;
    message: string;
  }>;
  read_graph(): Promise<{
    entities: {
      name: string;
      entityType: string;
      observations: string[];
    }[];
    relations: {
      from: string;
      to: string;
      relationType: string;
    }[];
  }>;
  search_nodes(params: {
    query: string;
  }): Promise<{
    entities: {
      name: string;
      entityType: string;
      observations: string[];
    }[];
    relations: {
      from: string;
      to: string;
      relationType: string;
    }[];
  }>;
};
