#include "serve/serve_routes.h"

#include <string>

#include "serve/exposition_writer.h"

namespace limpwatch::cli::serve {

std::vector<Route> BuildRoutes(MetricsPage* metrics) {
  std::vector<Route> routes;
  routes.push_back({"/metrics", [metrics](const HttpRequest&) {
                      HttpResponse response;
                      response.content_type = kExpositionContentType;
                      response.body = metrics->Render();
                      return response;
                    }});
  // Further pages go here, before the index, which lists them all.
  std::string index = "limpwatch serve: the traced servers of this node\n";
  for (const Route& route : routes) index += "  " + route.path + "\n";
  routes.push_back({"/", [index](const HttpRequest&) {
                      HttpResponse response;
                      response.body = index;
                      return response;
                    }});
  return routes;
}

}  // namespace limpwatch::cli::serve
