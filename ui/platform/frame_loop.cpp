#include "ui/platform/frame_loop.h"

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>
#include <GLFW/glfw3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <thread>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "ui/platform/gl_layers.h"
#include "ui/platform/input_script.h"
#include "ui/platform/item_registry.h"
#include "ui/platform/layer_cache.h"
#include "ui/platform/png.h"

namespace rlwb::ui {
namespace {

std::vector<FrameTiming> g_timings;

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// An offscreen colour buffer, so that headless frames have exactly the
// requested size and their pixels do not depend on the window being mapped.
struct Offscreen {
  GLuint fbo = 0, color = 0;
  int width = 0, height = 0;
  void create(int w, int h) {
    width = w;
    height = h;
    glGenFramebuffers(1, &fbo);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
  }
  void destroy() {
    if (fbo) glDeleteFramebuffers(1, &fbo);
    if (color) glDeleteRenderbuffers(1, &color);
  }
};

// Every quad ImGui draws samples the font atlas, so the fragment cost of
// a software rasterizer is mostly that texture lookup. Glyphs and baked
// line textures are drawn 1:1, where nearest and linear filtering give the
// same pixels; nearest is a third cheaper with llvmpipe.
void use_nearest_filter(GLuint texture) {
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
}

Image read_pixels(GLuint fbo, int width, int height) {
  Image image;
  image.width = width;
  image.height = height;
  image.rgba.resize(static_cast<size_t>(width) * height * 4);
  std::vector<uint8_t> flipped(image.rgba.size());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, flipped.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  const size_t stride = static_cast<size_t>(width) * 4;
  for (int y = 0; y < height; ++y)  // GL's first row is the bottom one
    std::copy_n(&flipped[(height - 1 - y) * stride], stride, &image.rgba[y * stride]);
  for (size_t i = 3; i < image.rgba.size(); i += 4) image.rgba[i] = 255;
  return image;
}

void apply_script_frame(ImGuiIO& io, const ScriptFrame& f) {
  io.MousePos = f.mouse;
  for (int b = 0; b < 3; ++b) io.MouseDown[b] = f.buttons[b];
  for (bool& down : io.KeysDown) down = false;
  io.KeyCtrl = f.ctrl;
  io.KeyShift = f.shift;
  io.KeyAlt = io.KeySuper = false;
  io.KeysDown[GLFW_KEY_LEFT_CONTROL] = f.ctrl;
  io.KeysDown[GLFW_KEY_LEFT_SHIFT] = f.shift;
  if (f.key_down > 0 && f.key_down < 512) io.KeysDown[f.key_down] = true;
  if (!f.chars.empty()) io.AddInputCharactersUTF8(f.chars.c_str());
  io.MouseWheel = f.wheel;
  io.DeltaTime = f.delta_time;
}

// What a window background looks like on this frame loop's backdrop: the
// clear colour, so that an app's full-screen root window can skip drawing
// its background (workbench.cpp) and look the same. With a software
// rasterizer that quad is the largest fill of a frame.
ImVec4 window_background_color() {
  const ImVec4 backdrop(0.08f, 0.08f, 0.09f, 1.0f), window = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  auto over = [&](float w, float b) { return w * window.w + b * (1 - window.w); };
  return ImVec4(over(window.x, backdrop.x), over(window.y, backdrop.y), over(window.z, backdrop.z), 1.0f);
}

void setup_style_and_font() {
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is the code's, not a file's
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 0;
  style.FrameRounding = 3;
  style.ScrollbarRounding = 3;
  const char* font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (std::filesystem::exists(font)) io.Fonts->AddFontFromFileTTF(font, 15.0f);
}

}  // namespace

const std::vector<FrameTiming>& last_frame_timings() { return g_timings; }

int run_frame_loop(const FrameLoopOptions& options, const FrameLoopHooks& hooks) {
  const bool headless = options.frames > 0 || !options.script.empty();
  std::optional<ScriptPlayer> player;
  if (!options.script.empty()) {
    std::ifstream in(options.script);
    if (!in) {
      std::cerr << "rlwb-gui: cannot read script " << options.script << "\n";
      return 3;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      player.emplace(parse_script(text));
    } catch (const ScriptError& e) {
      std::cerr << "rlwb-gui: " << options.script << ": " << e.what() << "\n";
      return 3;
    }
  }

  glfwSetErrorCallback([](int code, const char* text) {
    std::cerr << "rlwb-gui: GLFW error " << code << ": " << text << "\n";
  });
  if (!glfwInit()) {
    std::cerr << "rlwb-gui: cannot open a window (no display?); headless runs need an X "
                 "server, e.g. xvfb-run -a rlwb-gui ...\n";
    return 3;
  }
  if (headless) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr, nullptr);
  if (!window) {
    glfwTerminate();
    std::cerr << "rlwb-gui: cannot create an OpenGL window\n";
    return 3;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  setup_style_and_font();
  ImGui_ImplGlfw_InitForOpenGL(window, /*install_callbacks=*/!headless);
  ImGui_ImplOpenGL3_Init(nullptr);

  Offscreen offscreen;
  if (headless) offscreen.create(options.width, options.height);
  std::optional<GlLayers> layers(std::in_place);  // reset before the context goes
  LayerRenderer layer_renderer{[&layers](ImGuiID id, uint64_t key, ImVec2 min, ImVec2 max, ImU32 background,
                                         const LayerDraw& draw, ImTextureID& texture) {
    return layers->render(id, key, min, max, background, draw, texture);
  }};
  set_layer_renderer(&layer_renderer);
  bool font_filter_set = false;

  g_timings.clear();
  int exit_code = 0;
  int frames_after_script = options.frames;
  std::optional<std::chrono::steady_clock::time_point> settle_deadline;
  Image last_image;
  for (;;) {
    glfwPollEvents();
    if (!headless && glfwWindowShouldClose(window)) {
      if (!hooks.may_close || hooks.may_close()) break;
      glfwSetWindowShouldClose(window, GLFW_FALSE);  // the app asks first
    }
    ImGui_ImplOpenGL3_NewFrame();  // creates the font texture on the first frame
    if (!font_filter_set) {
      use_nearest_filter(static_cast<GLuint>(reinterpret_cast<intptr_t>(ImGui::GetIO().Fonts->TexID)));
      font_filter_set = true;
    }
    ImGui_ImplGlfw_NewFrame();
    ImGuiIO& io = ImGui::GetIO();
    std::optional<ScriptFrame> scripted;
    if (headless) {
      io.DisplaySize = ImVec2(static_cast<float>(options.width), static_cast<float>(options.height));
      io.DisplayFramebufferScale = ImVec2(1, 1);
      if (player) {
        try {
          scripted = player->next_frame(items());
        } catch (const ScriptError& e) {
          std::cerr << "rlwb-gui: " << options.script << ": " << e.what() << "\n";
          exit_code = 3;
          break;
        }
      }
      if (!scripted) {
        if (frames_after_script <= 0) break;
        if (!settle_deadline)
          settle_deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(static_cast<int>(hooks.settle_timeout_s * 1000));
        const bool settled =
            !hooks.settled || hooks.settled() || std::chrono::steady_clock::now() > *settle_deadline;
        if (settled)
          --frames_after_script;
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(5));  // data is on its way
        ScriptFrame idle;
        if (player) idle.mouse = io.MousePos;  // leave the pointer where the script put it
        scripted = idle;
      }
      apply_script_frame(io, *scripted);
      if (scripted->close && (!hooks.may_close || hooks.may_close())) break;
    }

    items().begin_frame();
    const uint64_t redrawn_before = layer_stats().redrawn;
    auto start = std::chrono::steady_clock::now();
    ImGui::NewFrame();
    hooks.draw();
    ImGui::Render();
    FrameTiming timing;
    timing.build_ms = ms_since(start);
    timing.vertices = ImGui::GetDrawData()->TotalVtxCount;
    timing.layers_redrawn = static_cast<int>(layer_stats().redrawn - redrawn_before);

    auto render_start = std::chrono::steady_clock::now();
    int fb_w = options.width, fb_h = options.height;
    if (headless) {
      glBindFramebuffer(GL_FRAMEBUFFER, offscreen.fbo);
    } else {
      glfwGetFramebufferSize(window, &fb_w, &fb_h);
    }
    glViewport(0, 0, fb_w, fb_h);
    const ImVec4 clear = window_background_color();
    glClearColor(clear.x, clear.y, clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (headless) {
      glFinish();
      timing.render_ms = ms_since(render_start);
      g_timings.push_back(timing);
      if (scripted && !scripted->screenshot.empty())
        write_png(scripted->screenshot, read_pixels(offscreen.fbo, fb_w, fb_h));
      glBindFramebuffer(GL_FRAMEBUFFER, 0);
    } else {
      glfwSwapBuffers(window);
    }
    layers->end_frame();
    if (hooks.wants_to_quit && hooks.wants_to_quit()) break;
  }

  if (headless && !options.screenshot.empty()) {
    try {
      write_png(options.screenshot, read_pixels(offscreen.fbo, options.width, options.height));
    } catch (const PngError& e) {
      std::cerr << "rlwb-gui: " << e.what() << "\n";
      exit_code = 3;
    }
  }
  if (hooks.before_exit) hooks.before_exit();
  if (!options.frame_times.empty()) {
    std::ofstream out(options.frame_times);
    out << "[";
    for (size_t i = 0; i < g_timings.size(); ++i)
      out << (i ? "," : "") << "{\"build_ms\":" << g_timings[i].build_ms
          << ",\"render_ms\":" << g_timings[i].render_ms << ",\"vertices\":" << g_timings[i].vertices
          << ",\"layers_redrawn\":" << g_timings[i].layers_redrawn << "}";
    out << "]\n";
  }

  set_layer_renderer(nullptr);
  layers.reset();
  offscreen.destroy();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace rlwb::ui
