#include "ui/platform/gl_layers.h"

#include <algorithm>

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>

#include "imgui_impl_opengl3.h"

namespace rlwb::ui {
namespace {

constexpr int kKeepFrames = 120;

// Premultiplied colours (the lines' texture): "source over" is ONE,
// ONE_MINUS_SRC_ALPHA. The backend restores its own blending afterwards.
void blend_premultiplied(const ImDrawList*, const ImDrawCmd*) {
  glBlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
}

unsigned new_texture(int width, int height) {
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER,
                  GL_NEAREST);  // shown 1:1
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  return texture;
}

void upload(unsigned texture, const LineImage& image) {
  GLint previous_texture = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous_texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, image.width, image.height, GL_RGBA, GL_UNSIGNED_BYTE,
                  image.pixels.data());
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous_texture));
}

}  // namespace

GlLayers::GlLayers() = default;

GlLayers::~GlLayers() {
  for (auto& [id, layer] : layers_) release(layer);
}

bool GlLayers::render(ImGuiID id, uint64_t key, ImVec2 min, ImVec2 max, ImU32 background,
                      const LayerDraw& draw, ImTextureID& texture) {
  const int width = static_cast<int>(max.x - min.x), height = static_cast<int>(max.y - min.y);
  if (width <= 0 || height <= 0) return false;
  Layer& layer = layers_[id];
  if (!layer.framebuffer || layer.width != width || layer.height != height) {
    release(layer);
    if (!allocate(layer, width, height)) {
      release(layer);
      return false;
    }
  }
  if (!layer.drawn || layer.key != key) {
    redraw(layer, min, max, background, draw);
    layer.key = key;
    layer.drawn = true;
  }
  layer.last_frame = frame_;
  texture = reinterpret_cast<ImTextureID>(static_cast<intptr_t>(layer.texture));
  return true;
}

void GlLayers::redraw(Layer& layer, ImVec2 min, ImVec2 max, ImU32 background, const LayerDraw& draw) {
  ImDrawList list(ImGui::GetDrawListSharedData());
  list._ResetForNewFrame();
  list.Flags = ImGui::GetWindowDrawList()->Flags;  // the same anti-aliasing as on screen
  list.PushTextureID(ImGui::GetIO().Fonts->TexID);
  list.PushClipRect(min, max, false);
  lines_.clear();
  draw(list, lines_);
  if (list.VtxBuffer.Size == 0) {
    // Nothing but lines (a plot's grid and series): the whole layer is
    // drawn on the CPU and uploaded, no framebuffer pass at all. The
    // layer is shown with v flipped (GL's first row is the bottom one),
    // so its rows go up bottom first.
    rasterize_lines(lines_, min, layer.width, layer.height, line_image_, background | IM_COL32_A_MASK);
    const size_t row = static_cast<size_t>(layer.width);
    for (int y = 0; y < layer.height / 2; ++y)
      std::swap_ranges(line_image_.pixels.begin() + y * row, line_image_.pixels.begin() + (y + 1) * row,
                       line_image_.pixels.begin() + (layer.height - 1 - y) * row);
    upload(layer.texture, line_image_);
    return;
  }
  if (!lines_.strips.empty()) {
    rasterize_lines(lines_, min, layer.width, layer.height, line_image_);
    upload(layer.lines_texture, line_image_);
    list.AddCallback(blend_premultiplied, nullptr);
    list.AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(layer.lines_texture)), min, max);
    list.AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  }
  ImDrawList* lists[] = {&list};
  ImDrawData data;
  data.Valid = true;
  data.CmdLists = lists;
  data.CmdListsCount = 1;
  data.TotalVtxCount = list.VtxBuffer.Size;
  data.TotalIdxCount = list.IdxBuffer.Size;
  data.DisplayPos = min;
  data.DisplaySize = ImVec2(max.x - min.x, max.y - min.y);
  data.FramebufferScale = ImVec2(1, 1);
  GLint previous = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous);
  glBindFramebuffer(GL_FRAMEBUFFER, layer.framebuffer);
  const ImVec4 bg = ImGui::ColorConvertU32ToFloat4(background);
  glDisable(GL_SCISSOR_TEST);
  glViewport(0, 0, layer.width, layer.height);
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(&data);
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous));
}

void GlLayers::end_frame() {
  ++frame_;
  for (auto it = layers_.begin(); it != layers_.end();) {
    if (frame_ - it->second.last_frame > kKeepFrames) {
      release(it->second);
      it = layers_.erase(it);
    } else {
      ++it;
    }
  }
}

bool GlLayers::allocate(Layer& layer, int width, int height) {
  GLint previous_texture = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous_texture);
  layer.texture = new_texture(width, height);
  layer.lines_texture = new_texture(width, height);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous_texture));
  glGenFramebuffers(1, &layer.framebuffer);
  GLint previous = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous);
  glBindFramebuffer(GL_FRAMEBUFFER, layer.framebuffer);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, layer.texture, 0);
  const bool complete = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous));
  layer.width = width;
  layer.height = height;
  layer.drawn = false;
  return complete;
}

void GlLayers::release(Layer& layer) {
  if (layer.framebuffer) glDeleteFramebuffers(1, &layer.framebuffer);
  if (layer.texture) glDeleteTextures(1, &layer.texture);
  if (layer.lines_texture) glDeleteTextures(1, &layer.lines_texture);
  layer = Layer{};
}

}  // namespace rlwb::ui
